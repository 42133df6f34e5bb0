// Package controller is the MyAppInstance reconciler, written the way kubebuilder scaffolds one.
package controller

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	myappv1 "example.com/myapp/tools/controller-peer/api/v1"
)

// Finalizer is the seed's finalizer, the same as the TypeScript operator's.
const Finalizer = "myappinstance.finalizer.example.com"

// MyAppInstanceReconciler reconciles a MyAppInstance: Service, Deployment (or, with storage, a StatefulSet and the
// headless Service that governs it), status.
type MyAppInstanceReconciler struct {
	client.Client
	Scheme                  *runtime.Scheme
	Recorder                recorder.EventRecorder
	MaxConcurrentReconciles int
}

// +kubebuilder:rbac:groups=example.com,resources=myappinstances,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=example.com,resources=myappinstances/status;myappinstances/finalizers,verbs=update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;persistentvolumeclaims,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile reads from the manager's caches and writes only what differs.
func (r *MyAppInstanceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	app := &myappv1.MyAppInstance{}
	if err := r.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if !app.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, app)
	}
	if controllerutil.AddFinalizer(app, Finalizer) {
		if err := r.Update(ctx, app); err != nil {
			return ctrl.Result{}, err
		}
	}

	var created []string // "Service web", for the one Created event of this reconcile
	createOrUpdate := func(obj client.Object, kind string, mutate func() error) error {
		result, err := controllerutil.CreateOrUpdate(ctx, r.Client, obj, func() error {
			if err := mutate(); err != nil {
				return err
			}
			return controllerutil.SetControllerReference(app, obj, r.Scheme)
		})
		if result == controllerutil.OperationResultCreated {
			created = append(created, kind+" "+obj.GetName())
		}
		return err
	}

	service := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: serviceName(app.Name), Namespace: app.Namespace}}
	if err := createOrUpdate(service, "Service", func() error { mutateService(service, app); return nil }); err != nil {
		return ctrl.Result{}, err
	}

	var progress rollout
	deployment := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: workloadName(app.Name), Namespace: app.Namespace}}
	statefulSet := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: workloadName(app.Name), Namespace: app.Namespace}}
	governing := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: governingServiceName(app.Name), Namespace: app.Namespace}}
	if app.Spec.Storage == "" {
		if err := r.deleteIfControlled(ctx, app, governing); err != nil {
			return ctrl.Result{}, err
		}
		if err := createOrUpdate(deployment, "Deployment", func() error {
			mutateDeployment(deployment, app)
			return nil
		}); err != nil {
			return ctrl.Result{}, err
		}
		progress = deploymentRollout(deployment, replicasOf(app))
	} else {
		// Storage was added: the Deployment gives way to a StatefulSet (the TypeScript operator keeps the old
		// workload serving until the new one is ready; the peer does not measure moves, so it keeps it simple).
		if err := r.deleteIfControlled(ctx, app, deployment); err != nil {
			return ctrl.Result{}, err
		}
		if err := createOrUpdate(governing, "Service", func() error {
			mutateGoverningService(governing, app)
			return nil
		}); err != nil {
			return ctrl.Result{}, err
		}
		if err := createOrUpdate(statefulSet, "StatefulSet", func() error {
			return mutateStatefulSet(statefulSet, app)
		}); err != nil {
			return ctrl.Result{}, err
		}
		progress = statefulSetRollout(statefulSet, replicasOf(app))
	}

	if len(created) > 0 {
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "Created", "Create", "Created %s", joinNames(created))
	}

	status := computeStatus(app, progress)
	if !equality.Semantic.DeepEqual(status, app.Status) {
		previous := app.Status
		app.Status = status
		if err := r.Status().Update(ctx, app); err != nil {
			return ctrl.Result{}, err
		}
		log.V(1).Info("status updated", "phase", status.Phase)
		r.recordStatusEvents(app, previous, status)
	}
	return ctrl.Result{}, nil
}

// recordStatusEvents records what the TypeScript operator records for a status change (lifecycle-events.ts):
// RolloutComplete when the rolled-out image moves, else Ready when Ready turns True again. A first Ready records
// none (the Created event told it); RollingOut progress events are left out.
func (r *MyAppInstanceReconciler) recordStatusEvents(app *myappv1.MyAppInstance, previous, next myappv1.MyAppInstanceStatus) {
	switch {
	case next.Image != "" && previous.Image != "" && next.Image != previous.Image:
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "RolloutComplete", "RollOut",
			"%s is rolled out: %d/%d replicas ready", next.Image, next.ReadyReplicas, next.Replicas)
	case previous.Image != "" && readyStatus(next) == metav1.ConditionTrue && readyStatus(previous) != metav1.ConditionTrue:
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, "Ready", "Reconcile", "%s", next.Message)
	}
}

func readyStatus(status myappv1.MyAppInstanceStatus) metav1.ConditionStatus {
	if condition := meta.FindStatusCondition(status.Conditions, "Ready"); condition != nil {
		return condition.Status
	}
	return metav1.ConditionUnknown
}

// joinNames lists "Service web and Deployment web", Services first (the order they are created in).
func joinNames(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// finalize deletes the volume claims when the instance asks for it (storageReclaimPolicy: Delete), then removes
// the finalizer; the garbage collector deletes the children through their owner references.
func (r *MyAppInstanceReconciler) finalize(ctx context.Context, app *myappv1.MyAppInstance) error {
	if !controllerutil.ContainsFinalizer(app, Finalizer) {
		return nil
	}
	if app.Spec.Storage != "" && app.Spec.StorageReclaimPolicy == "Delete" {
		claims := &corev1.PersistentVolumeClaimList{}
		if err := r.List(ctx, claims, client.InNamespace(app.Namespace), client.MatchingLabels(selectorLabels(app.Name))); err != nil {
			return err
		}
		for i := range claims.Items {
			if err := r.Delete(ctx, &claims.Items[i]); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	controllerutil.RemoveFinalizer(app, Finalizer)
	return r.Update(ctx, app)
}

func (r *MyAppInstanceReconciler) deleteIfControlled(ctx context.Context, app *myappv1.MyAppInstance, obj client.Object) error {
	if err := r.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, app) {
		return nil
	}
	if err := r.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// SetupWithManager watches instances and the children they own.
func (r *MyAppInstanceReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&myappv1.MyAppInstance{}).
		Owns(&appsv1.Deployment{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Named("myappinstance").
		Complete(r)
}
