//go:build k8s1_36

package main

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/resourceclaim"
	"k8s.io/kubernetes/pkg/features"
)

// newClaimController builds the resourceclaim controller as kube-controller-manager 1.36 does
// (cmd/kube-controller-manager/app/resource.go): it also takes the PodGroup informer, used only when
// DRAWorkloadResourceClaims is on.
func newClaimController(logger klog.Logger, client kubernetes.Interface, factory informers.SharedInformerFactory) (*resourceclaim.Controller, error) {
	return resourceclaim.NewController(logger, resourceclaim.Features{
		AdminAccess:            utilfeature.DefaultFeatureGate.Enabled(features.DRAAdminAccess),
		PrioritizedList:        utilfeature.DefaultFeatureGate.Enabled(features.DRAPrioritizedList),
		WorkloadResourceClaims: utilfeature.DefaultFeatureGate.Enabled(features.DRAWorkloadResourceClaims),
	}, client, factory.Core().V1().Pods(), factory.Scheduling().V1alpha2().PodGroups(),
		factory.Resource().V1().ResourceClaims(), factory.Resource().V1().ResourceClaimTemplates())
}
