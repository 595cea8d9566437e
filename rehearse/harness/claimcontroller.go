//go:build !k8s1_36

package main

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/resourceclaim"
	"k8s.io/kubernetes/pkg/features"
)

// newClaimController builds the resourceclaim controller as kube-controller-manager 1.34/1.35 does
// (cmd/kube-controller-manager/app/core.go).
func newClaimController(logger klog.Logger, client kubernetes.Interface, factory informers.SharedInformerFactory) (*resourceclaim.Controller, error) {
	return resourceclaim.NewController(logger, resourceclaim.Features{
		AdminAccess:     utilfeature.DefaultFeatureGate.Enabled(features.DRAAdminAccess),
		PrioritizedList: utilfeature.DefaultFeatureGate.Enabled(features.DRAPrioritizedList),
	}, client, factory.Core().V1().Pods(), factory.Resource().V1().ResourceClaims(), factory.Resource().V1().ResourceClaimTemplates())
}
