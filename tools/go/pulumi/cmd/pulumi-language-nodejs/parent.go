package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// exitWithParent makes this plugin end with the process that started it, the pulumi engine. Plugins are the
// engine's children: when `pulumi up` is SIGKILLed nothing stops them, and upstream's health check of the engine
// runs only every 5 minutes (a killed up left this process running for 293 s). On Linux the kernel sends SIGTERM
// the moment the parent exits (PR_SET_PDEATHSIG, set here in the child itself, so it does not depend on how the
// engine starts plugins); elsewhere, and in case the signal is missed, the parent pid is looked at every second:
// once it differs from the one at start, the parent is gone and this process was re-parented. It is read before
// the death signal is set and compared after, so a parent that died in between is noticed too.
//
// onGone runs once, on a goroutine, and must end the process soon (within 10 s). A SIGTERM from anyone else
// also runs it: ending is what SIGTERM asks for either way.
//
// The same file is in tools/go/pulumi/cmd/pulumi-language-nodejs and tools/go/pulumi-kubernetes/cmd/
// pulumi-resource-kubernetes: the two wrapper modules share no package. Keep them alike.
func exitWithParent(onGone func()) {
	parent := os.Getppid()
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	setParentDeathSignal(syscall.SIGTERM)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for os.Getppid() == parent {
			select {
			case <-term:
				onGone()
				return
			case <-tick.C:
			}
		}
		onGone()
	}()
}
