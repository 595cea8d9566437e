// Command rehearse-harness runs Kubernetes' own control plane in one process, without kubelets: an embedded
// etcd, kube-apiserver, kube-scheduler (default profile) and the deployment, replicaset, daemonset,
// resourceclaim and garbage-collector controllers. It speaks JSON lines on stdin/stdout (see ../README.md);
// logs go to stderr.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/klog/v2"
)

type request struct {
	ID              int64            `json:"id"`
	Op              string           `json:"op"`
	Objects         []map[string]any `json:"objects,omitempty"`
	Kinds           []string         `json:"kinds,omitempty"`
	Refs            []map[string]any `json:"refs,omitempty"`
	WithPodsOnNodes bool             `json:"withPodsOnNodes,omitempty"`
	TimeoutSeconds  float64          `json:"timeoutSeconds,omitempty"`
	QuietMillis     *int64           `json:"quietMillis,omitempty"`
}

var (
	outMu  sync.Mutex
	stdout = bufio.NewWriter(os.Stdout)
)

// emit writes one JSON line to stdout.
func emit(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(map[string]any{"ok": false, "error": "encoding the reply: " + err.Error()})
	}
	outMu.Lock()
	defer outMu.Unlock()
	stdout.Write(data)
	stdout.WriteByte('\n')
	stdout.Flush()
}

// kubernetesVersion is the k8s.io/kubernetes module this binary was built from (e.g. v1.35.4).
func kubernetesVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "k8s.io/kubernetes" {
				if dep.Replace != nil {
					return dep.Replace.Version
				}
				return dep.Version
			}
		}
	}
	return "unknown"
}

func main() {
	// Imported packages register flags of their own on flag.CommandLine: this program has its own set.
	flags := flag.NewFlagSet("rehearse-harness", flag.ExitOnError)
	workdir := flags.String("workdir", "", "directory for the kubeconfig and the control plane's files (kept); default: a temporary directory removed on exit")
	verbosity := flags.Int("v", -1, "log verbosity on stderr; -1 (default) logs errors only")
	_ = flags.Parse(os.Args[1:])

	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	if *verbosity >= 0 {
		_ = klogFlags.Set("logtostderr", "true")
		_ = klogFlags.Set("v", strconv.Itoa(*verbosity))
	} else {
		// Errors still reach stderr (stderrthreshold); everything else is dropped, and klog writes no files.
		_ = klogFlags.Set("logtostderr", "false")
		_ = klogFlags.Set("alsologtostderr", "false")
		_ = klogFlags.Set("stderrthreshold", "ERROR")
		klog.SetOutput(io.Discard)
	}

	keep := *workdir != ""
	dir := *workdir
	var err error
	if keep {
		err = os.MkdirAll(dir, 0o700)
	} else {
		dir, err = os.MkdirTemp("", "rehearse-harness-")
	}
	if err != nil {
		emit(map[string]any{"ready": false, "error": "workdir: " + err.Error()})
		os.Exit(1)
	}
	dir, _ = filepath.Abs(dir)
	tmp := filepath.Join(dir, "tmp")
	_ = os.MkdirAll(tmp, 0o700)
	// The test servers make their temporary files under TMPDIR: keep them inside the workdir.
	_ = os.Setenv("TMPDIR", tmp)

	tb := newTB(tmp)
	var once sync.Once
	exit := func(code int) {
		once.Do(func() {
			done := make(chan struct{})
			go func() { tb.runCleanups(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				klog.Errorf("shutdown took longer than 20 s; exiting anyway")
			}
			if keep {
				_ = os.RemoveAll(tmp)
			} else {
				_ = os.RemoveAll(dir)
			}
			os.Exit(code)
		})
	}

	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-signals
		exit(130)
	}()

	started := time.Now()
	cp, err := startControlPlane(tb, dir)
	if err != nil {
		emit(map[string]any{"ready": false, "error": err.Error()})
		exit(1)
	}
	klog.V(1).Infof("control plane ready in %s", time.Since(started))
	emit(map[string]any{"ready": true, "kubeconfig": cp.kubeconfig, "version": kubernetesVersion(),
		"startSeconds": time.Since(started).Seconds()})

	reader := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := reader.ReadBytes('\n')
		if len(line) > 0 {
			var req request
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				emit(map[string]any{"ok": false, "error": "not a JSON request: " + jerr.Error()})
			} else {
				reply, stop := cp.handle(&req)
				reply["id"] = req.ID
				emit(reply)
				if stop {
					exit(0)
				}
			}
		}
		if err != nil {
			// stdin closed: the client is gone.
			exit(0)
		}
	}
}

// handle runs one request; it never panics (a panic becomes an error reply).
func (cp *controlPlane) handle(req *request) (reply map[string]any, stop bool) {
	defer func() {
		if r := recover(); r != nil {
			reply = map[string]any{"ok": false, "error": fmt.Sprintf("internal error in %s: %v", req.Op, r)}
		}
	}()
	switch req.Op {
	case "apply":
		return map[string]any{"ok": true, "results": cp.apply(req.Objects)}, false
	case "settle":
		timeout := 60.0
		if req.TimeoutSeconds > 0 {
			timeout = req.TimeoutSeconds
		}
		quiet := int64(500)
		if req.QuietMillis != nil {
			quiet = *req.QuietMillis
		}
		elapsed, flapping, err := cp.settle(time.Duration(timeout*float64(time.Second)), time.Duration(quiet)*time.Millisecond)
		if err != nil {
			return map[string]any{"ok": false, "error": err.Error(), "elapsedSeconds": elapsed.Seconds(),
				"flapping": flapping}, false
		}
		return map[string]any{"ok": true, "elapsedSeconds": elapsed.Seconds(), "flapping": flapping}, false
	case "list":
		items, err := cp.list(req.Kinds)
		if err != nil {
			return map[string]any{"ok": false, "error": err.Error()}, false
		}
		return map[string]any{"ok": true, "items": items}, false
	case "delete":
		if err := cp.delete(req.Refs, req.WithPodsOnNodes); err != nil {
			return map[string]any{"ok": false, "error": err.Error()}, false
		}
		return map[string]any{"ok": true}, false
	case "reset":
		if err := cp.reset(); err != nil {
			return map[string]any{"ok": false, "error": err.Error()}, false
		}
		return map[string]any{"ok": true}, false
	case "shutdown":
		return map[string]any{"ok": true}, true
	default:
		return map[string]any{"ok": false, "error": fmt.Sprintf("unknown op %q", req.Op)}, false
	}
}
