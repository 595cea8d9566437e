package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// settle waits until the controllers and the scheduler have nothing left to do: every DaemonSet, Deployment and
// ReplicaSet has caught up with its spec, every Pod is bound or marked unschedulable by the scheduler, every
// ResourceClaim of a bound Pod is allocated, and no watched object changed for `quiet`. It also returns the pods
// whose claim statuses flap (see flapWatch): they never go quiet, and they never get scheduled.
func (cp *controlPlane) settle(timeout, quiet time.Duration) (time.Duration, []string, error) {
	start := time.Now()
	flaps := newFlapWatch()
	deadline := start.Add(timeout)
	var last map[string]string
	writers := map[string]string{} // who wrote each object last, as its managedFields say
	lastChange := start
	changed := map[string]time.Time{} // when each object last changed
	writes := map[string]int{}        // how often it changed during this wait
	said := map[string][]string{}     // a pod's last two scheduling messages, when they differ
	for {
		seen, err := cp.snapshot()
		versions, notes, moving := seen.versions, seen.notes, seen.moving
		now := time.Now()
		if err == nil {
			flaps.observe(seen.pods)
			flaps.versions(versions, seen.pods)
			for key, writer := range seen.writers {
				writers[key] = writer
			}
			for key, note := range notes {
				if seen := said[key]; len(seen) == 0 || seen[len(seen)-1] != note {
					said[key] = append(seen, note)[max(0, len(seen)-1):]
				}
			}
			if last != nil {
				for key, version := range versions {
					if last[key] != version {
						changed[key], writes[key] = now, writes[key]+1
					}
				}
				for key := range last {
					if _, ok := versions[key]; !ok {
						changed[key], writes[key] = now, writes[key]+1
					}
				}
			}
			if last == nil || !sameVersions(last, versions) {
				last, lastChange = versions, now
			}
			wait := quiet
			if erroring(notes) { // its retry comes after the backoff (1 s) and the backoff queue's flush window (1 s)
				wait = max(quiet, errorRetryQuiet)
			}
			if len(moving) == 0 && now.Sub(lastChange) >= wait {
				return now.Sub(start), flaps.pods(), nil
			}
		}
		if now.After(deadline) {
			what := strings.Join(limit(moving, 12), "; ")
			if err != nil {
				what = err.Error()
			} else if len(moving) == 0 {
				what = fmt.Sprintf("objects still changing within the last %s: %s", quiet,
					strings.Join(limit(busiest(changed, writes, said, writers, now.Add(-quiet)), 12), "; "))
			}
			return now.Sub(start), flaps.pods(), fmt.Errorf("timeout after %.1f s: %s", now.Sub(start).Seconds(), what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// errorRetryQuiet: how long nothing may change, while a pod's last attempt was a scheduling error, before the
// cluster counts as settled: the scheduler's error backoff (podMaxBackoffSeconds, 1 here) plus the 1 s window the
// backoff queue is flushed in, plus a margin. The retry may place the pod (what other pods took since can turn an
// error into a plain "no", and the next alternative of the claim is tried).
const errorRetryQuiet = 2500 * time.Millisecond

func erroring(notes map[string]string) bool {
	for _, note := range notes {
		if strings.HasPrefix(note, corev1.PodReasonSchedulerError+":") {
			return true
		}
	}
	return false
}

// lastWriter: the field manager of an object's newest managedFields entry, with its operation and subresource.
func lastWriter(meta metav1.Object) string {
	var newest *metav1.ManagedFieldsEntry
	for i, entry := range meta.GetManagedFields() {
		if entry.Time != nil && (newest == nil || !entry.Time.Before(newest.Time)) {
			newest = &meta.GetManagedFields()[i]
		}
	}
	if newest == nil {
		return ""
	}
	what := string(newest.Operation)
	if newest.Subresource != "" {
		what += " " + newest.Subresource
	}
	return fmt.Sprintf("%s (%s)", newest.Manager, what)
}

func sameVersions(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for key, version := range a {
		if b[key] != version {
			return false
		}
	}
	return true
}

// busiest names the objects that changed since `since`, the most often written first: what keeps a cluster from
// going quiet is the first thing to look at when a settle times out.
func busiest(changed map[string]time.Time, writes map[string]int, said map[string][]string, writers map[string]string,
	since time.Time) []string {
	var keys []string
	for key, at := range changed {
		if !at.Before(since) {
			keys = append(keys, key)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if writes[keys[i]] != writes[keys[j]] {
			return writes[keys[i]] > writes[keys[j]]
		}
		return keys[i] < keys[j]
	})
	out := make([]string, len(keys))
	for i, key := range keys {
		out[i] = fmt.Sprintf("%s (%d writes", key, writes[key])
		if writer := writers[key]; writer != "" {
			out[i] += ", the last by " + writer
		}
		out[i] += ")"
		if len(said[key]) > 1 { // a pod whose scheduling message keeps changing: say between what
			out[i] += fmt.Sprintf(" between %q and %q", said[key][0], said[key][1])
		}
	}
	return out
}

func limit(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(items[:n:n], fmt.Sprintf("... and %d more", len(items)-n))
}

func generation(observed, want int64) bool { return observed >= want }

// view: one reading of the cluster. versions: each watched object's UID and resourceVersion by kind/namespace/
// name; notes: each refused pod's scheduling reason and message; writers: each object's last field manager;
// pods: each pod's shape (see flapWatch); moving: what has not caught up yet.
type view struct {
	versions, notes, writers map[string]string
	pods                     map[string]podShape
	moving                   []string
}

// snapshot reads the cluster once (see view).
func (cp *controlPlane) snapshot() (view, error) {
	ctx, cancel := context.WithTimeout(cp.ctx, 20*time.Second)
	defer cancel()
	versions, notes, writers := map[string]string{}, map[string]string{}, map[string]string{}
	shapes := map[string]podShape{}
	var moving []string
	all := metav1.ListOptions{}
	add := func(kind string, meta metav1.Object) {
		key := kind + "/" + meta.GetName()
		if meta.GetNamespace() != "" {
			key = kind + "/" + meta.GetNamespace() + "/" + meta.GetName()
		}
		versions[key] = string(meta.GetUID()) + " " + meta.GetResourceVersion()
		if writer := lastWriter(meta); writer != "" {
			writers[key] = writer
		}
	}

	deployments, err := cp.client.AppsV1().Deployments("").List(ctx, all)
	if err != nil {
		return view{}, err
	}
	for i := range deployments.Items {
		d := &deployments.Items[i]
		add("Deployment", d)
		if !generation(d.Status.ObservedGeneration, d.Generation) {
			moving = append(moving, fmt.Sprintf("Deployment/%s/%s: generation %d not observed yet", d.Namespace, d.Name, d.Generation))
		}
	}
	replicasets, err := cp.client.AppsV1().ReplicaSets("").List(ctx, all)
	if err != nil {
		return view{}, err
	}
	for i := range replicasets.Items {
		rs := &replicasets.Items[i]
		add("ReplicaSet", rs)
		want := int32(1)
		if rs.Spec.Replicas != nil {
			want = *rs.Spec.Replicas
		}
		if !generation(rs.Status.ObservedGeneration, rs.Generation) || rs.Status.Replicas != want {
			moving = append(moving, fmt.Sprintf("ReplicaSet/%s/%s: %d of %d pods", rs.Namespace, rs.Name, rs.Status.Replicas, want))
		}
	}
	daemonsets, err := cp.client.AppsV1().DaemonSets("").List(ctx, all)
	if err != nil {
		return view{}, err
	}
	for i := range daemonsets.Items {
		ds := &daemonsets.Items[i]
		add("DaemonSet", ds)
		if !generation(ds.Status.ObservedGeneration, ds.Generation) ||
			ds.Status.CurrentNumberScheduled != ds.Status.DesiredNumberScheduled {
			moving = append(moving, fmt.Sprintf("DaemonSet/%s/%s: %d of %d nodes", ds.Namespace, ds.Name,
				ds.Status.CurrentNumberScheduled, ds.Status.DesiredNumberScheduled))
		}
	}
	claims, err := cp.client.ResourceV1().ResourceClaims("").List(ctx, all)
	if err != nil {
		return view{}, err
	}
	allocated := map[string]bool{}
	for i := range claims.Items {
		c := &claims.Items[i]
		add("ResourceClaim", c)
		allocated[c.Namespace+"/"+c.Name] = c.Status.Allocation != nil
	}
	pods, err := cp.client.CoreV1().Pods("").List(ctx, all)
	if err != nil {
		return view{}, err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		add("Pod", pod)
		shapes["Pod/"+pod.Namespace+"/"+pod.Name] = shapeOf(pod)
		if note := schedulingNote(pod); note != "" {
			notes["Pod/"+pod.Namespace+"/"+pod.Name] = note
		}
		if pod.DeletionTimestamp != nil {
			moving = append(moving, fmt.Sprintf("Pod/%s/%s: being deleted", pod.Namespace, pod.Name))
			continue
		}
		if pod.Spec.NodeName == "" {
			if !scheduleRefused(pod) {
				moving = append(moving, fmt.Sprintf("Pod/%s/%s: not scheduled yet", pod.Namespace, pod.Name))
			}
			continue
		}
		if needsStart(pod) {
			moving = append(moving, fmt.Sprintf("Pod/%s/%s: bound, not started yet", pod.Namespace, pod.Name))
		}
		for _, name := range podClaimNames(pod) {
			if !allocated[pod.Namespace+"/"+name] {
				moving = append(moving, fmt.Sprintf("Pod/%s/%s: ResourceClaim %s not allocated", pod.Namespace, pod.Name, name))
			}
		}
	}
	nodes, err := cp.client.CoreV1().Nodes().List(ctx, all)
	if err != nil {
		return view{}, err
	}
	for i := range nodes.Items {
		add("Node", &nodes.Items[i])
	}
	slices, err := cp.client.ResourceV1().ResourceSlices().List(ctx, all)
	if err != nil {
		return view{}, err
	}
	for i := range slices.Items {
		add("ResourceSlice", &slices.Items[i])
	}
	sort.Strings(moving)
	return view{versions, notes, writers, shapes, moving}, nil
}

// schedulingNote: the reason and message of a pod's PodScheduled condition when the scheduler refused it.
func schedulingNote(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			message := c.Message
			if len(message) > 300 {
				message = message[:300] + "..."
			}
			return c.Reason + ": " + message
		}
	}
	return ""
}

// scheduleRefused: the scheduler tried and said no (or the pod waits for its scheduling gates).
func scheduleRefused(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			switch c.Reason {
			case corev1.PodReasonUnschedulable, corev1.PodReasonSchedulerError, corev1.PodReasonSchedulingGated:
				return true
			}
		}
	}
	return false
}

// podClaimNames: the ResourceClaims a pod uses (generated ones as the resourceclaim controller recorded them).
func podClaimNames(pod *corev1.Pod) []string {
	var names []string
	generated := map[string]string{}
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			generated[s.Name] = *s.ResourceClaimName
		}
	}
	for _, c := range pod.Spec.ResourceClaims {
		switch {
		case c.ResourceClaimName != nil:
			names = append(names, *c.ResourceClaimName)
		case generated[c.Name] != "":
			names = append(names, generated[c.Name])
		}
	}
	return names
}
