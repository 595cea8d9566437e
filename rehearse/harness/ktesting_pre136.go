//go:build !k8s1_36

package main

import (
	restclient "k8s.io/client-go/rest"
	"k8s.io/kubernetes/test/utils/ktesting"
)

// withClient: the test context with clients for cfg and a cancel of its own (ktesting 1.34/1.35: functions).
func withClient(tCtx ktesting.TContext, cfg *restclient.Config) ktesting.TContext {
	return ktesting.WithCancel(ktesting.WithRESTConfig(tCtx, cfg))
}
