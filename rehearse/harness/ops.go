package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

var metav1GetOptions = metav1.GetOptions{}

const fieldManager = "rehearse"

// appliedRef is one object apply created (reset deletes it again).
type appliedRef struct {
	gvr        schema.GroupVersionResource
	namespace  string
	name       string
	namespaced bool
}

type applyResult struct {
	Ref   string `json:"ref"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

func refOf(kind, namespace, name string) string {
	if namespace == "" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}

// mapping resolves a kind, once again after a fresh discovery when the kind is new (a CRD just applied).
func (cp *controlPlane) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := cp.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) {
		cp.mapper.Reset()
		m, err = cp.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, err
}

func (cp *controlPlane) resource(m *meta.RESTMapping, namespace string) dynamic.ResourceInterface {
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return cp.dynamic.Resource(m.Resource).Namespace(namespace)
	}
	return cp.dynamic.Resource(m.Resource)
}

func (cp *controlPlane) apply(objects []map[string]any) []applyResult {
	results := make([]applyResult, 0, len(objects))
	for _, object := range objects {
		results = append(results, cp.applyOne(object))
	}
	return results
}

func (cp *controlPlane) applyOne(object map[string]any) (result applyResult) {
	obj := &unstructured.Unstructured{Object: object}
	gvk := obj.GroupVersionKind()
	result.Ref = refOf(gvk.Kind, obj.GetNamespace(), obj.GetName())
	fail := func(err error) applyResult {
		result.OK, result.Error = false, err.Error()
		return result
	}
	if gvk.Kind == "" || gvk.Version == "" {
		return fail(fmt.Errorf("the object has no apiVersion/kind"))
	}
	if obj.GetName() == "" {
		return fail(fmt.Errorf("the object has no metadata.name"))
	}
	m, err := cp.mapping(gvk)
	if err != nil {
		return fail(fmt.Errorf("the API server does not serve %s: %v", gvk.String(), err))
	}
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	if namespaced {
		if obj.GetNamespace() == "" {
			obj.SetNamespace("default")
		}
		result.Ref = refOf(gvk.Kind, obj.GetNamespace(), obj.GetName())
		if err := cp.ensureNamespace(obj.GetNamespace()); err != nil {
			return fail(err)
		}
	} else if obj.GetNamespace() != "" {
		obj.SetNamespace("")
	}
	status, hasStatus := object["status"]
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(cp.ctx, 60*time.Second)
	defer cancel()
	force := true
	res := cp.resource(m, obj.GetNamespace())
	if _, err := res.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: fieldManager, Force: &force}); err != nil {
		return fail(err)
	}
	cp.remember(m.Resource, obj.GetNamespace(), obj.GetName(), namespaced)
	if hasStatus && gvk.Kind == "Node" && gvk.Group == "" {
		statusBody, _ := json.Marshal(map[string]any{
			"apiVersion": obj.GetAPIVersion(), "kind": gvk.Kind,
			"metadata": map[string]any{"name": obj.GetName()}, "status": status,
		})
		if _, err := res.Patch(ctx, obj.GetName(), types.ApplyPatchType, statusBody,
			metav1.PatchOptions{FieldManager: fieldManager, Force: &force}, "status"); err != nil {
			return fail(fmt.Errorf("status: %w", err))
		}
	}
	if gvk.Kind == "CustomResourceDefinition" && gvk.Group == "apiextensions.k8s.io" {
		if err := cp.waitEstablished(ctx, res, obj.GetName()); err != nil {
			return fail(err)
		}
		if err := cp.waitServed(ctx, obj); err != nil {
			return fail(err)
		}
	}
	result.OK = true
	return result
}

func (cp *controlPlane) remember(gvr schema.GroupVersionResource, namespace, name string, namespaced bool) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	key := gvr.String() + "|" + namespace + "|" + name
	cp.applied[key] = appliedRef{gvr: gvr, namespace: namespace, name: name, namespaced: namespaced}
}

func (cp *controlPlane) ensureNamespace(name string) error {
	ctx, cancel := context.WithTimeout(cp.ctx, 30*time.Second)
	defer cancel()
	if _, err := cp.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); err == nil {
		return nil
	}
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
	body, _ := json.Marshal(ns.Object)
	force := true
	_, err := cp.dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Patch(
		ctx, name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: fieldManager, Force: &force})
	if err != nil {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	cp.remember(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", name, false)
	return nil
}

func (cp *controlPlane) waitEstablished(ctx context.Context, res dynamic.ResourceInterface, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conditions {
			cond, _ := c.(map[string]any)
			if cond["type"] == "Established" && cond["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CustomResourceDefinition %s not Established: %w", name, err)
	}
	return nil
}

// waitServed: discovery lists a new CRD's kind a moment after it is Established; the next object may be one.
func (cp *controlPlane) waitServed(ctx context.Context, crd *unstructured.Unstructured) error {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		cp.mapper.Reset()
		_, err := cp.mapper.RESTMapping(schema.GroupKind{Group: group, Kind: kind})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("CustomResourceDefinition %s: %s.%s not served: %w", crd.GetName(), kind, group, err)
	}
	return nil
}

// gvrFor turns "pods", "resourceclaims", "deployments.apps", "Pod" into the served resource.
func (cp *controlPlane) gvrFor(kind string) (schema.GroupVersionResource, bool, error) {
	resolve := func() (schema.GroupVersionResource, error) {
		lower := strings.ToLower(kind)
		resource, group, _ := strings.Cut(lower, ".")
		gvr, err := cp.mapper.ResourceFor(schema.GroupVersionResource{Group: group, Resource: resource})
		if err == nil {
			return gvr, nil
		}
		// A kind name ("Pod", "ResourceClaim").
		gvks, kerr := cp.mapper.KindsFor(schema.GroupVersionResource{Group: group, Resource: resource})
		if kerr == nil && len(gvks) > 0 {
			m, merr := cp.mapper.RESTMapping(gvks[0].GroupKind(), gvks[0].Version)
			if merr == nil {
				return m.Resource, nil
			}
		}
		return schema.GroupVersionResource{}, err
	}
	gvr, err := resolve()
	if err != nil {
		cp.mapper.Reset()
		gvr, err = resolve()
	}
	if err != nil {
		return gvr, false, fmt.Errorf("unknown kind %q: %v", kind, err)
	}
	gvk, err := cp.mapper.KindFor(gvr)
	if err != nil {
		return gvr, false, err
	}
	m, err := cp.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return gvr, false, err
	}
	return gvr, m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

func (cp *controlPlane) list(kinds []string) (map[string][]map[string]any, error) {
	out := map[string][]map[string]any{}
	for _, kind := range kinds {
		gvr, _, err := cp.gvrFor(kind)
		if err != nil {
			return nil, err
		}
		items, err := cp.listAll(gvr)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", kind, err)
		}
		out[kind] = items
	}
	return out, nil
}

func (cp *controlPlane) listAll(gvr schema.GroupVersionResource) ([]map[string]any, error) {
	ctx, cancel := context.WithTimeout(cp.ctx, 60*time.Second)
	defer cancel()
	list, err := cp.dynamic.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	apiVersion, kind := list.GetAPIVersion(), strings.TrimSuffix(list.GetKind(), "List")
	items := make([]map[string]any, 0, len(list.Items))
	for i := range list.Items {
		item := list.Items[i].Object
		if _, ok := item["apiVersion"]; !ok || item["apiVersion"] == "" {
			item["apiVersion"] = apiVersion
		}
		if _, ok := item["kind"]; !ok || item["kind"] == "" {
			item["kind"] = kind
		}
		items = append(items, item)
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := &unstructured.Unstructured{Object: items[i]}, &unstructured.Unstructured{Object: items[j]}
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
	return items, nil
}

// refObject: a ref is {"apiVersion", "kind", "name", "namespace"}; a whole object (metadata.name) works too.
func refObject(ref map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": ref["apiVersion"], "kind": ref["kind"]}}
	name, _ := ref["name"].(string)
	namespace, _ := ref["namespace"].(string)
	if metadata, ok := ref["metadata"].(map[string]any); ok {
		if name == "" {
			name, _ = metadata["name"].(string)
		}
		if namespace == "" {
			namespace, _ = metadata["namespace"].(string)
		}
	}
	obj.SetName(name)
	obj.SetNamespace(namespace)
	return obj
}

var zero int64

func deleteOptions() metav1.DeleteOptions {
	background := metav1.DeletePropagationBackground
	return metav1.DeleteOptions{GracePeriodSeconds: &zero, PropagationPolicy: &background}
}

// delete removes objects with grace period 0. A Node takes its ResourceSlices with it (what the garbage
// collector does through their owner reference) and, withPodsOnNodes, the pods bound to it (what the pod GC
// does once a node is gone); their controllers then create replacements.
func (cp *controlPlane) delete(refs []map[string]any, withPodsOnNodes bool) error {
	ctx, cancel := context.WithTimeout(cp.ctx, 60*time.Second)
	defer cancel()
	var problems []string
	for _, ref := range refs {
		obj := refObject(ref)
		gvk := obj.GroupVersionKind()
		m, err := cp.mapping(gvk)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", refOf(gvk.Kind, obj.GetNamespace(), obj.GetName()), err))
			continue
		}
		ns := obj.GetNamespace()
		if m.Scope.Name() == meta.RESTScopeNameNamespace && ns == "" {
			ns = "default"
		}
		err = cp.resource(m, ns).Delete(ctx, obj.GetName(), deleteOptions())
		if err != nil && !apierrors.IsNotFound(err) {
			problems = append(problems, fmt.Sprintf("%s: %v", refOf(gvk.Kind, ns, obj.GetName()), err))
		}
		if gvk.Kind == "Node" && gvk.Group == "" {
			selector := metav1.ListOptions{FieldSelector: "spec.nodeName=" + obj.GetName()}
			slices := cp.dynamic.Resource(schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices"})
			if err := slices.DeleteCollection(ctx, deleteOptions(), selector); err != nil {
				problems = append(problems, fmt.Sprintf("ResourceSlices of %s: %v", obj.GetName(), err))
			}
			if withPodsOnNodes {
				pods, err := cp.client.CoreV1().Pods("").List(ctx, selector)
				if err != nil {
					problems = append(problems, fmt.Sprintf("pods on %s: %v", obj.GetName(), err))
					continue
				}
				for _, pod := range pods.Items {
					err := cp.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, deleteOptions())
					if err != nil && !apierrors.IsNotFound(err) {
						problems = append(problems, fmt.Sprintf("Pod/%s/%s: %v", pod.Namespace, pod.Name, err))
					}
				}
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}
