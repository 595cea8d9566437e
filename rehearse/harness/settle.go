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
// ResourceClaim of a bound Pod is allocated, and no watched object changed for `quiet`.
func (cp *controlPlane) settle(timeout, quiet time.Duration) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	lastFingerprint, lastChange := "", start
	for {
		fingerprint, moving, err := cp.snapshot()
		now := time.Now()
		if err == nil {
			if fingerprint != lastFingerprint {
				lastFingerprint, lastChange = fingerprint, now
			}
			if len(moving) == 0 && now.Sub(lastChange) >= quiet {
				return now.Sub(start), nil
			}
		}
		if now.After(deadline) {
			what := strings.Join(limit(moving, 12), "; ")
			if err != nil {
				what = err.Error()
			} else if len(moving) == 0 {
				what = fmt.Sprintf("objects still changing within the last %s", quiet)
			}
			return now.Sub(start), fmt.Errorf("timeout after %.1f s: %s", now.Sub(start).Seconds(), what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func limit(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(items[:n:n], fmt.Sprintf("... and %d more", len(items)-n))
}

func generation(observed, want int64) bool { return observed >= want }

// snapshot reads the cluster once: a fingerprint of every watched object's resourceVersion and what is
// still moving.
func (cp *controlPlane) snapshot() (string, []string, error) {
	ctx, cancel := context.WithTimeout(cp.ctx, 20*time.Second)
	defer cancel()
	var fp strings.Builder
	var moving []string
	all := metav1.ListOptions{}
	add := func(kind string, meta metav1.Object) {
		fp.WriteString(kind)
		fp.WriteByte(' ')
		fp.WriteString(string(meta.GetUID()))
		fp.WriteByte(' ')
		fp.WriteString(meta.GetResourceVersion())
		fp.WriteByte('\n')
	}

	deployments, err := cp.client.AppsV1().Deployments("").List(ctx, all)
	if err != nil {
		return "", nil, err
	}
	for i := range deployments.Items {
		d := &deployments.Items[i]
		add("d", d)
		if !generation(d.Status.ObservedGeneration, d.Generation) {
			moving = append(moving, fmt.Sprintf("Deployment/%s/%s: generation %d not observed yet", d.Namespace, d.Name, d.Generation))
		}
	}
	replicasets, err := cp.client.AppsV1().ReplicaSets("").List(ctx, all)
	if err != nil {
		return "", nil, err
	}
	for i := range replicasets.Items {
		rs := &replicasets.Items[i]
		add("rs", rs)
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
		return "", nil, err
	}
	for i := range daemonsets.Items {
		ds := &daemonsets.Items[i]
		add("ds", ds)
		if !generation(ds.Status.ObservedGeneration, ds.Generation) ||
			ds.Status.CurrentNumberScheduled != ds.Status.DesiredNumberScheduled {
			moving = append(moving, fmt.Sprintf("DaemonSet/%s/%s: %d of %d nodes", ds.Namespace, ds.Name,
				ds.Status.CurrentNumberScheduled, ds.Status.DesiredNumberScheduled))
		}
	}
	claims, err := cp.client.ResourceV1().ResourceClaims("").List(ctx, all)
	if err != nil {
		return "", nil, err
	}
	allocated := map[string]bool{}
	for i := range claims.Items {
		c := &claims.Items[i]
		add("rc", c)
		allocated[c.Namespace+"/"+c.Name] = c.Status.Allocation != nil
	}
	pods, err := cp.client.CoreV1().Pods("").List(ctx, all)
	if err != nil {
		return "", nil, err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		add("p", pod)
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
		return "", nil, err
	}
	for i := range nodes.Items {
		add("n", &nodes.Items[i])
	}
	slices, err := cp.client.ResourceV1().ResourceSlices().List(ctx, all)
	if err != nil {
		return "", nil, err
	}
	for i := range slices.Items {
		add("s", &slices.Items[i])
	}
	sort.Strings(moving)
	return fp.String(), moving, nil
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
