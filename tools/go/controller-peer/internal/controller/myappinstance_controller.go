// Package controller is the MyAppInstance reconciler, written the way kubebuilder scaffolds one.
package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	myappv1 "example.com/myapp/tools/controller-peer/api/v1"
)

// Finalizer is the seed's finalizer, the same as the TypeScript operator's.
const Finalizer = "myappinstance.finalizer.example.com"

// MyAppInstanceReconciler reconciles a MyAppInstance: Service, Deployment (or, with storage, a StatefulSet and the
// headless Service that governs it), status.
type MyAppInstanceReconciler struct {
	client.Client
	Scheme                  *runtime.Scheme
	MaxConcurrentReconciles int
}

// +kubebuilder:rbac:groups=example.com,resources=myappinstances,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=example.com,resources=myappinstances/status;myappinstances/finalizers,verbs=update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;persistentvolumeclaims,verbs=get;list;watch;create;update;patch;delete

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

	service := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: serviceName(app.Name), Namespace: app.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, service, func() error {
		mutateService(service, app)
		return controllerutil.SetControllerReference(app, service, r.Scheme)
	}); err != nil {
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
		if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, deployment, func() error {
			mutateDeployment(deployment, app)
			return controllerutil.SetControllerReference(app, deployment, r.Scheme)
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
		if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, governing, func() error {
			mutateGoverningService(governing, app)
			return controllerutil.SetControllerReference(app, governing, r.Scheme)
		}); err != nil {
			return ctrl.Result{}, err
		}
		if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, statefulSet, func() error {
			if err := mutateStatefulSet(statefulSet, app); err != nil {
				return err
			}
			return controllerutil.SetControllerReference(app, statefulSet, r.Scheme)
		}); err != nil {
			return ctrl.Result{}, err
		}
		progress = statefulSetRollout(statefulSet, replicasOf(app))
	}

	status := computeStatus(app, progress)
	if !equality.Semantic.DeepEqual(status, app.Status) {
		app.Status = status
		if err := r.Status().Update(ctx, app); err != nil {
			return ctrl.Result{}, err
		}
		log.V(1).Info("status updated", "phase", status.Phase)
	}
	return ctrl.Result{}, nil
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
