// Command controller-peer runs the MyAppInstance peer operator: the kubebuilder main.go, trimmed to what a
// benchmark needs (no webhooks, no TLS on metrics).
package main

import (
	"flag"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	myappv1 "example.com/myapp/tools/controller-peer/api/v1"
	"example.com/myapp/tools/controller-peer/internal/controller"
)

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(myappv1.AddToScheme(scheme))
}

func main() {
	var metricsAddr, probeAddr, namespaces string
	var enableLeaderElection bool
	var concurrency int
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "address of /metrics (\"0\": off)")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz (\"0\": off)")
	flag.StringVar(&namespaces, "namespaces", "", "comma-separated namespaces to watch (default: all)")
	flag.BoolVar(&enableLeaderElection, "leader-elect", false, "elect a leader before reconciling")
	flag.IntVar(&concurrency, "max-concurrent-reconciles", 1, "reconciles at once")
	opts := zap.Options{Development: false}
	opts.BindFlags(flag.CommandLine)
	flag.Parse() // --kubeconfig is registered by controller-runtime's config loader
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	cacheOptions := cache.Options{}
	if namespaces != "" {
		cacheOptions.DefaultNamespaces = map[string]cache.Config{}
		for _, namespace := range strings.Split(namespaces, ",") {
			cacheOptions.DefaultNamespaces[namespace] = cache.Config{}
		}
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cacheOptions,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         enableLeaderElection,
		LeaderElectionID:       "controller-peer.example.com",
	})
	if err != nil {
		log.Error(err, "unable to create the manager")
		os.Exit(1)
	}
	if err := (&controller.MyAppInstanceReconciler{
		Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder("controller-peer"),
		MaxConcurrentReconciles: concurrency,
	}).SetupWithManager(mgr); err != nil {
		log.Error(err, "unable to create the controller")
		os.Exit(1)
	}
	utilruntime.Must(mgr.AddHealthzCheck("healthz", healthz.Ping))
	utilruntime.Must(mgr.AddReadyzCheck("readyz", healthz.Ping))

	log.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}
