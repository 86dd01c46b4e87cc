package kubetest

import "runtime"

func goarch() string { return runtime.GOARCH }
