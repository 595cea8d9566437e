package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

var (
	gvrNamespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gvrEvents     = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	// What the controllers and the scheduler create from applied objects, besides what was applied.
	derivedNamespaced = []schema.GroupVersionResource{
		{Group: "apps", Version: "v1", Resource: "deployments"},
		{Group: "apps", Version: "v1", Resource: "daemonsets"},
		{Group: "apps", Version: "v1", Resource: "replicasets"},
		{Group: "apps", Version: "v1", Resource: "controllerrevisions"},
		{Version: "v1", Resource: "pods"},
		{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"},
		{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaimtemplates"},
		gvrEvents,
	}
	// Cluster-scoped kinds a rehearsal fills: all of their objects go.
	clearedClusterScoped = []schema.GroupVersionResource{
		{Version: "v1", Resource: "nodes"},
		{Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices"},
		{Group: "resource.k8s.io", Version: "v1", Resource: "deviceclasses"},
	}
	systemNamespaces = map[string]bool{"kube-system": true, "kube-public": true, "kube-node-lease": true}
)

// protected: objects of the control plane itself in the default namespace.
func protected(gvr schema.GroupVersionResource, namespace, name string) bool {
	if namespace != "default" {
		return false
	}
	switch gvr.Resource {
	case "services", "endpoints", "endpointslices":
		return name == "kubernetes"
	}
	return false
}

// reset deletes everything a rehearsal made, with grace period 0, and returns when it is gone.
func (cp *controlPlane) reset() error {
	began := time.Now()
	ctx, cancel := context.WithTimeout(cp.ctx, 120*time.Second)
	defer cancel()

	cp.mu.Lock()
	applied := make([]appliedRef, 0, len(cp.applied))
	for _, ref := range cp.applied {
		applied = append(applied, ref)
	}
	cp.mu.Unlock()

	// Owners before what they own, so no controller recreates what was just deleted; then what was applied.
	var namespaced []schema.GroupVersionResource
	seen := map[schema.GroupVersionResource]bool{}
	addNamespaced := func(gvr schema.GroupVersionResource) {
		if !seen[gvr] {
			seen[gvr] = true
			namespaced = append(namespaced, gvr)
		}
	}
	for _, gvr := range derivedNamespaced {
		addNamespaced(gvr)
	}
	var clusterRefs []appliedRef
	for _, ref := range applied {
		switch {
		case ref.namespaced:
			addNamespaced(ref.gvr)
		case ref.gvr == gvrNamespaces:
		default:
			clusterRefs = append(clusterRefs, ref)
		}
	}
	cleared := clearedClusterScoped

	var problems []string
	var problemsMu sync.Mutex
	note := func(what string, err error) {
		if err != nil && !apierrors.IsNotFound(err) {
			problemsMu.Lock()
			problems = append(problems, fmt.Sprintf("%s: %v", what, err))
			problemsMu.Unlock()
		}
	}
	opts := deleteOptions()

	// 1. Namespaced objects, outside the system namespaces: the owners first (so no controller makes again
	// what goes next), then the rest side by side, with the cluster-scoped kinds.
	clearKind := func(gvr schema.GroupVersionResource) {
		start := time.Now()
		defer func() { klog.V(1).Infof("reset: %s in %s", gvr.Resource, time.Since(start)) }()
		list, err := cp.dynamic.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			note("listing "+gvr.Resource, err)
			return
		}
		byNamespace := map[string][]string{}
		keep := map[string]bool{}
		for _, item := range list.Items {
			ns := item.GetNamespace()
			if systemNamespaces[ns] {
				continue
			}
			if protected(gvr, ns, item.GetName()) {
				keep[ns] = true
				continue
			}
			byNamespace[ns] = append(byNamespace[ns], item.GetName())
		}
		for ns, names := range byNamespace {
			res := cp.dynamic.Resource(gvr).Namespace(ns)
			if keep[ns] {
				for _, name := range names {
					note(fmt.Sprintf("%s/%s/%s", gvr.Resource, ns, name), res.Delete(ctx, name, opts))
				}
				continue
			}
			note(fmt.Sprintf("%s in %s", gvr.Resource, ns), res.DeleteCollection(ctx, opts, metav1.ListOptions{}))
		}
	}
	isCleared := map[schema.GroupVersionResource]bool{}
	for _, gvr := range cleared {
		isCleared[gvr] = true
	}
	var owners, rest []func()
	for _, gvr := range namespaced {
		gvr := gvr
		if gvr.Group == "apps" && gvr.Resource != "controllerrevisions" {
			owners = append(owners, func() { clearKind(gvr) })
		} else {
			rest = append(rest, func() { clearKind(gvr) })
		}
	}
	// 2. Cluster-scoped objects.
	for _, gvr := range cleared {
		gvr := gvr
		rest = append(rest, func() { note(gvr.Resource, cp.dynamic.Resource(gvr).DeleteCollection(ctx, opts, metav1.ListOptions{})) })
	}
	for _, ref := range clusterRefs {
		if isCleared[ref.gvr] {
			continue
		}
		ref := ref
		rest = append(rest, func() { note(ref.gvr.Resource+"/"+ref.name, cp.dynamic.Resource(ref.gvr).Delete(ctx, ref.name, opts)) })
	}
	parallel(owners)
	klog.V(1).Infof("reset: owners deleted after %s", time.Since(began))
	parallel(rest)
	// 3. Wait until it is gone: what a controller made again meanwhile is deleted again, and objects held by a
	// finalizer no controller here would lift lose it.
	klog.V(1).Infof("reset: deletes issued after %s", time.Since(began))
	var remaining, lastComplete []string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		listingFailed := false
		remaining = remaining[:0]
		var mu sync.Mutex
		left := func(what string, failed bool) {
			mu.Lock()
			defer mu.Unlock()
			remaining = append(remaining, what)
			listingFailed = listingFailed || failed
		}
		check := func(gvr schema.GroupVersionResource, keepFn func(ns, name string) bool) {
			list, err := cp.dynamic.Resource(gvr).List(ctx, metav1.ListOptions{})
			if err != nil {
				left(fmt.Sprintf("listing %s: %v", gvr.Resource, err), true)
				return
			}
			for i := range list.Items {
				item := &list.Items[i]
				if keepFn(item.GetNamespace(), item.GetName()) {
					continue
				}
				left(refOf(item.GetKind(), item.GetNamespace(), item.GetName()), false)
				cp.deleteAgain(ctx, gvr, item)
			}
		}
		// Every kind side by side; namespaces after.
		var checks []func()
		for _, gvr := range namespaced {
			if gvr == gvrEvents {
				continue // events written while the pods went are not waited for
			}
			checks = append(checks, func() {
				check(gvr, func(ns, name string) bool { return systemNamespaces[ns] || protected(gvr, ns, name) })
			})
		}
		parallel(checks)
		namespacedLeft := len(remaining)
		checks = checks[:0]
		for _, gvr := range cleared {
			checks = append(checks, func() { check(gvr, func(string, string) bool { return false }) })
		}
		for _, ref := range clusterRefs {
			checks = append(checks, func() {
				item, err := cp.dynamic.Resource(ref.gvr).Get(ctx, ref.name, metav1.GetOptions{})
				switch {
				case err == nil:
					left(ref.gvr.Resource+"/"+ref.name, false)
					cp.deleteAgain(ctx, ref.gvr, item)
				case !apierrors.IsNotFound(err):
					left(fmt.Sprintf("%s/%s: %v", ref.gvr.Resource, ref.name, err), true)
				}
			})
		}
		// Namespaces go once their content is gone (the API server refuses to change an object whose
		// namespace is gone, a finalizer included). No namespace controller runs here: they are finalized
		// directly.
		checks = append(checks, func() {
			if namespacedLeft == 0 {
				check(gvrNamespaces, func(_, name string) bool { return systemNamespaces[name] || name == "default" })
			} else {
				left("namespaces (after their content)", false)
			}
		})
		parallel(checks)
		if !listingFailed {
			lastComplete = append(lastComplete[:0], remaining...)
		}
		return len(remaining) == 0, nil
	})
	klog.V(1).Infof("reset: empty after %s", time.Since(began))
	if err != nil {
		if lastComplete == nil {
			lastComplete = remaining
		}
		problems = append(problems, fmt.Sprintf("still there after %s: %s", time.Since(began).Round(time.Second),
			strings.Join(limit(lastComplete, 12), ", ")))
	}

	cp.mu.Lock()
	cp.applied = map[string]appliedRef{}
	cp.mu.Unlock()
	if len(problems) > 0 {
		return fmt.Errorf("reset: %s", strings.Join(problems, "; "))
	}
	return nil
}

// parallel runs the functions side by side and returns when all are done.
func parallel(fns []func()) {
	var wg sync.WaitGroup
	for _, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn()
		}()
	}
	wg.Wait()
}

// deleteAgain: an object still there during reset is deleted (again); one that waits for a finalizer loses it.
func (cp *controlPlane) deleteAgain(ctx context.Context, gvr schema.GroupVersionResource, item *unstructured.Unstructured) {
	var res dynamic.ResourceInterface = cp.dynamic.Resource(gvr)
	if item.GetNamespace() != "" {
		res = cp.dynamic.Resource(gvr).Namespace(item.GetNamespace())
	}
	switch {
	case gvr == gvrNamespaces:
		_ = cp.removeNamespace(ctx, item.GetName())
	case item.GetDeletionTimestamp() == nil:
		_ = res.Delete(ctx, item.GetName(), deleteOptions())
	case len(item.GetFinalizers()) > 0:
		_, _ = res.Patch(ctx, item.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	}
}

// removeNamespace: delete (it turns Terminating), empty spec.finalizers through the finalize subresource
// (the namespace controller's job), delete again (now it goes).
func (cp *controlPlane) removeNamespace(ctx context.Context, name string) error {
	nsClient := cp.client.CoreV1().Namespaces()
	// A namespace already Terminating answers 409 Conflict here until it is finalized: not an error.
	if err := nsClient.Delete(ctx, name, deleteOptions()); err != nil && !apierrors.IsConflict(err) {
		return err
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ns, err := nsClient.Get(ctx, name, metav1.GetOptions{})
		if err != nil || len(ns.Spec.Finalizers) == 0 {
			return err
		}
		ns.Spec.Finalizers = nil
		_, err = nsClient.Finalize(ctx, ns, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	err = nsClient.Delete(ctx, name, deleteOptions())
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
