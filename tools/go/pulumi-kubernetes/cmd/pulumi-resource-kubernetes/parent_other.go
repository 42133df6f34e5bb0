//go:build !linux

package main

import "syscall"

// setParentDeathSignal does nothing: only Linux has PR_SET_PDEATHSIG. exitWithParent's parent pid poll covers
// the other systems.
func setParentDeathSignal(syscall.Signal) {}
