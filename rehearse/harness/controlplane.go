package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	kubeschedulerconfigv1 "k8s.io/kube-scheduler/config/v1"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/pkg/controller/daemon"
	"k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	kubeschedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/test/integration/util"
	"k8s.io/kubernetes/test/utils/ktesting"
	"k8s.io/kubernetes/test/utils/ktesting/initoption"
)

type controlPlane struct {
	ctx        ktesting.TContext
	client     kubernetes.Interface
	dynamic    dynamic.Interface
	discovery  discovery.CachedDiscoveryInterface
	mapper     *restmapper.DeferredDiscoveryRESTMapper
	kubeconfig string

	mu      sync.Mutex
	applied map[string]appliedRef // what apply created, by ref, for reset
}

// apiServerFlags: the defaults of the minor, except what needs a kubelet or controllers not run here.
var apiServerFlags = []string{
	// TaintNodesByCondition: no node-lifecycle controller and no kubelet would ever lift the
	// node.kubernetes.io/not-ready taint it puts on every new Node. ServiceAccount: no serviceaccount
	// controller creates the default ServiceAccount a pod would be refused without.
	"--disable-admission-plugins=TaintNodesByCondition,ServiceAccount",
	// No endpoints for the kubernetes Service: 127.0.0.1 is not a valid endpoint address.
	"--endpoint-reconciler-type=none",
	// Every cloud's API server admits privileged containers (GKE's driver installer is one); the test
	// server's default is false.
	"--allow-privileged=true",
}

func localURL(port int) url.URL {
	return url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
}

func startControlPlane(tb *harnessTB, dir string) (cp *controlPlane, err error) {
	defer func() {
		if r := recover(); r != nil {
			if f, ok := r.(fatal); ok {
				err = fmt.Errorf("starting the control plane: %s", f.msg)
				return
			}
			panic(r)
		}
	}()
	tCtx := ktesting.Init(tb, initoption.PerTestOutput(false))

	// etcd, embedded, on ports the kernel picks on 127.0.0.1.
	etcdCfg := testserver.NewTestConfig(tb)
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	client, peer := localURL(ports[0]), localURL(ports[1])
	etcdCfg.ListenClientUrls, etcdCfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	etcdCfg.ListenPeerUrls, etcdCfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	etcdCfg.InitialCluster = etcdCfg.InitialClusterFromName(etcdCfg.Name)
	etcdClient := testserver.RunEtcd(tb, etcdCfg)
	tb.Cleanup(func() { _ = etcdClient.Close() })

	storage := storagebackend.NewDefaultConfig(uuid.New().String()+"/registry", nil)
	storage.Transport.ServerList = []string{client.String()}

	opts := kubeapiservertesting.NewDefaultTestServerOptions()
	server, err := kubeapiservertesting.StartTestServer(tCtx, opts, apiServerFlags, storage)
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver: %w", err)
	}
	tb.Cleanup(server.TearDownFn)

	cfg := restclient.CopyConfig(server.ClientConfig)
	cfg.QPS, cfg.Burst = 5000, 5000
	tCtx = withClient(tCtx, cfg)
	tb.Cleanup(func() { tCtx.Cancel("shutting down") })

	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, server); err != nil {
		return nil, err
	}
	tb.Cleanup(func() { _ = os.Remove(kubeconfig) })

	// kube-scheduler with the default profile, as the v1 configuration defaults it, but for one timing: a pod whose
	// scheduling attempt ended in an error (not "unschedulable") waits in the error backoff queue, which is never
	// popped early, for 1 s, 2 s, 4 s ... up to podMaxBackoffSeconds (default 10) before it is tried again
	// (pkg/scheduler/backend/queue/backoff_queue.go, v1.35.4). With 1 s, settle can wait for that retry in
	// errorRetryQuiet instead of 11 s; which node or device a pod gets does not depend on it.
	schedCfg, err := defaultSchedulerConfig()
	if err != nil {
		return nil, err
	}
	schedCfg.PodInitialBackoffSeconds, schedCfg.PodMaxBackoffSeconds = 1, 1
	util.StartScheduler(tCtx, schedCfg, nil)

	if err := startControllers(tCtx, cfg); err != nil {
		return nil, err
	}

	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc := memory.NewMemCacheClient(tCtx.Client().Discovery())
	cp = &controlPlane{
		ctx:        tCtx,
		client:     tCtx.Client(),
		dynamic:    dyn,
		discovery:  disc,
		mapper:     restmapper.NewDeferredDiscoveryRESTMapper(disc),
		kubeconfig: kubeconfig,
		applied:    map[string]appliedRef{},
	}
	// Ready once the bootstrap objects (priority classes, the default namespace) are there.
	err = wait.PollUntilContextTimeout(tCtx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cp.client.SchedulingV1().PriorityClasses().Get(ctx, "system-node-critical", metav1GetOptions)
		return err == nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the bootstrap priority classes: %w", err)
	}
	return cp, nil
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func defaultSchedulerConfig() (*kubeschedulerconfig.KubeSchedulerConfiguration, error) {
	gvk := kubeschedulerconfigv1.SchemeGroupVersion.WithKind("KubeSchedulerConfiguration")
	cfg := kubeschedulerconfig.KubeSchedulerConfiguration{}
	if _, _, err := kubeschedulerscheme.Codecs.UniversalDecoder().Decode(nil, &gvk, &cfg); err != nil {
		return nil, fmt.Errorf("default scheduler configuration: %w", err)
	}
	return &cfg, nil
}

// startControllers runs the controllers a scheduling rehearsal needs, as kube-controller-manager builds them.
func startControllers(tCtx ktesting.TContext, cfg *restclient.Config) error {
	client := tCtx.Client()
	factory := informers.NewSharedInformerFactory(client, 0)

	dsc, err := daemon.NewDaemonSetsController(tCtx, factory.Apps().V1().DaemonSets(), factory.Apps().V1().ControllerRevisions(),
		factory.Core().V1().Pods(), factory.Core().V1().Nodes(), client, flowcontrol.NewBackOff(1*time.Second, 15*time.Minute))
	if err != nil {
		return fmt.Errorf("daemonset controller: %w", err)
	}
	rsc := replicaset.NewReplicaSetController(tCtx, factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods(), client, replicaset.BurstReplicas)
	dc, err := deployment.NewDeploymentController(tCtx, factory.Apps().V1().Deployments(), factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods(), client)
	if err != nil {
		return fmt.Errorf("deployment controller: %w", err)
	}
	claims, err := newClaimController(klog.FromContext(tCtx), client, factory)
	if err != nil {
		return fmt.Errorf("resourceclaim controller: %w", err)
	}
	// The garbage collector: deleting a Deployment removes its ReplicaSets and Pods, a Pod its generated
	// ResourceClaims, a Node the objects it owns, as in a real cluster.
	runGC := util.CreateGCController(tCtx, tCtx, *cfg, factory)
	kubelet, err := newKubeletStandIn(client, factory.Core().V1().Pods())
	if err != nil {
		return fmt.Errorf("kubelet stand-in: %w", err)
	}

	factory.Start(tCtx.Done())
	factory.WaitForCacheSync(tCtx.Done())
	go dsc.Run(tCtx, 2)
	go rsc.Run(tCtx, 5)
	go dc.Run(tCtx, 5)
	go claims.Run(tCtx, 5)
	go runGC()
	go kubelet.run(tCtx, 5)
	return nil
}

// writeKubeconfig: the server's own serving certificate as the CA (it is self-signed for 127.0.0.1), and the
// loopback bearer token (a cluster admin).
func writeKubeconfig(path string, server kubeapiservertesting.TestServer) error {
	certFile := server.ServerOpts.SecureServing.ServerCert.CertKey.CertFile
	ca, err := os.ReadFile(certFile)
	if err != nil {
		return fmt.Errorf("reading the serving certificate %s: %w", certFile, err)
	}
	host := fmt.Sprintf("https://127.0.0.1:%d", server.ServerOpts.SecureServing.BindPort)
	config := clientcmdapi.NewConfig()
	config.Clusters["rehearsal"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: ca}
	config.AuthInfos["rehearsal"] = &clientcmdapi.AuthInfo{Token: server.ClientConfig.BearerToken}
	config.Contexts["rehearsal"] = &clientcmdapi.Context{Cluster: "rehearsal", AuthInfo: "rehearsal", Namespace: "default"}
	config.CurrentContext = "rehearsal"
	return clientcmd.WriteToFile(*config, path)
}
