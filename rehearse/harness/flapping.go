package main

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The resourceclaim controller of Kubernetes 1.34 to 1.36 applies a pod's status.resourceClaimStatuses with only
// the entries it added in that sync, as the list's sole field manager, so server-side apply removes the others
// (kubernetes/kubernetes#138407, fixed by #138408 in 1.37; v1.34.4, v1.35.4 and v1.36.3 still have it). A pod with
// two or more ResourceClaimTemplates can then see its list flip between subsets in a hot loop, each write
// restoring one entry and dropping another, and kube-scheduler, which needs every entry, refuses the pod whenever
// it reads a partial list ("ResourceClaim not created yet"). Nothing else in the cluster changes, so a settle would
// wait for ever. Deleting one of a pending pod's two generated claims starts it every time (the controller
// re-creates that claim and applies only its entry): tests/rehearsal/test_harness.py.
//
// flapWatch recognises that loop from the outside: a pod whose resourceVersion keeps changing while nothing but
// its list of claim statuses does, each time a strict subset of its template claims. Such a pod is fingerprinted
// without that list, and settle reports it, so a caller can tell a cluster that is done from one that never will be.

// flipsToFlap: how many such writes in one settle mark a pod as flapping (the loop writes several a second).
const flipsToFlap = 4

// podShape: what flapWatch compares between two readings of a pod.
type podShape struct {
	version   string // UID and resourceVersion
	claims    string // the names in status.resourceClaimStatuses, sorted
	entries   int    // how many there are
	templates int    // the pod's claims made from a ResourceClaimTemplate
	rest      string // UID, node, nomination, phase, deletion, PodScheduled status and reason: what decides
}

func shapeOf(pod *corev1.Pod) podShape {
	var names []string
	for _, s := range pod.Status.ResourceClaimStatuses {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	templates := 0
	for _, c := range pod.Spec.ResourceClaims {
		if c.ResourceClaimTemplateName != nil {
			templates++
		}
	}
	rest := []string{string(pod.UID), pod.Spec.NodeName, pod.Status.NominatedNodeName, string(pod.Status.Phase)}
	if pod.DeletionTimestamp != nil {
		rest = append(rest, "deleting")
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled { // not its message: which node's error it quotes can vary by attempt
			rest = append(rest, string(c.Status), c.Reason)
		}
	}
	return podShape{version: string(pod.UID) + " " + pod.ResourceVersion, claims: strings.Join(names, ","),
		entries: len(names), templates: templates, rest: strings.Join(rest, "\x00")}
}

type flapWatch struct {
	last     map[string]podShape
	flips    map[string]int
	flapping map[string]bool
}

func newFlapWatch() *flapWatch {
	return &flapWatch{last: map[string]podShape{}, flips: map[string]int{}, flapping: map[string]bool{}}
}

// observe takes one reading of every pod and counts the writes that changed nothing but a partial claim list.
func (f *flapWatch) observe(pods map[string]podShape) {
	for key, now := range pods {
		before, seen := f.last[key]
		if seen && before.version != now.version && before.rest == now.rest && before.claims != now.claims &&
			now.templates >= 2 && now.entries < now.templates {
			f.flips[key]++
			if f.flips[key] >= flipsToFlap {
				f.flapping[key] = true
			}
		}
		f.last[key] = now
	}
}

// versions replaces each pod's resourceVersion by what decides its placement (see podShape.rest) and its claim
// statuses, a flapping pod's without them: a settle waits for those to stop changing, not for every status
// write (a pod refused by a Filter error is tried again about every second, and the message may quote another
// node's error each time).
func (f *flapWatch) versions(versions map[string]string, pods map[string]podShape) {
	for key, shape := range pods {
		if f.flapping[key] {
			versions[key] = "flapping " + shape.rest
		} else {
			versions[key] = shape.rest + "\x00" + shape.claims
		}
	}
}

// pods: the flapping pods as namespace/name, sorted.
func (f *flapWatch) pods() []string {
	out := []string{}
	for key := range f.flapping {
		out = append(out, strings.TrimPrefix(key, "Pod/"))
	}
	sort.Strings(out)
	return out
}
