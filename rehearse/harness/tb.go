package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/klog/v2"
)

// fatal is the panic value of a Fatal/FailNow/Skip call: startup recovers it and reports {"ready": false}.
type fatal struct{ msg string }

// harnessTB is the small testing.TB that Kubernetes' test servers want outside of `go test`. The embedded
// (nil) testing.TB only supplies the unexported method of the interface; every method the test servers call
// is implemented here. Cleanups run in reverse order on shutdown; temporary directories live in the workdir.
type harnessTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	failed   bool
	tmpRoot  string
	tmpCount int
}

func newTB(tmpRoot string) *harnessTB { return &harnessTB{tmpRoot: tmpRoot} }

func (t *harnessTB) Name() string { return "rehearse" }
func (t *harnessTB) Helper()      {}

func (t *harnessTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

// runCleanups runs every registered cleanup once, the last registered first.
func (t *harnessTB) runCleanups() {
	for {
		t.mu.Lock()
		n := len(t.cleanups)
		if n == 0 {
			t.mu.Unlock()
			return
		}
		f := t.cleanups[n-1]
		t.cleanups = t.cleanups[:n-1]
		t.mu.Unlock()
		func() {
			defer func() {
				if r := recover(); r != nil {
					klog.Errorf("cleanup: %v", r)
				}
			}()
			f()
		}()
	}
}

func (t *harnessTB) Log(args ...any) { klog.V(3).InfoDepth(1, fmt.Sprint(args...)) }
func (t *harnessTB) Logf(format string, args ...any) {
	klog.V(3).InfoDepth(1, fmt.Sprintf(format, args...))
}

func (t *harnessTB) Error(args ...any) {
	t.setFailed()
	klog.ErrorDepth(1, fmt.Sprint(args...))
}

func (t *harnessTB) Errorf(format string, args ...any) {
	t.setFailed()
	klog.ErrorDepth(1, fmt.Sprintf(format, args...))
}

func (t *harnessTB) setFailed() {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
}

func (t *harnessTB) Fail() { t.setFailed() }
func (t *harnessTB) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}
func (t *harnessTB) FailNow()          { t.setFailed(); panic(fatal{"FailNow"}) }
func (t *harnessTB) Fatal(args ...any) { t.setFailed(); panic(fatal{fmt.Sprint(args...)}) }
func (t *harnessTB) Fatalf(format string, args ...any) {
	t.setFailed()
	panic(fatal{fmt.Sprintf(format, args...)})
}
func (t *harnessTB) Skip(args ...any) { panic(fatal{"skip: " + fmt.Sprint(args...)}) }
func (t *harnessTB) SkipNow()         { panic(fatal{"skip"}) }
func (t *harnessTB) Skipf(format string, args ...any) {
	panic(fatal{"skip: " + fmt.Sprintf(format, args...)})
}
func (t *harnessTB) Skipped() bool            { return false }
func (t *harnessTB) Setenv(key, value string) { _ = os.Setenv(key, value) }

func (t *harnessTB) TempDir() string {
	t.mu.Lock()
	t.tmpCount++
	dir := filepath.Join(t.tmpRoot, fmt.Sprintf("tmp%d", t.tmpCount))
	t.mu.Unlock()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		panic(fatal{err.Error()})
	}
	return dir
}
