package controller

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	myappv1 "example.com/myapp/tools/controller-peer/api/v1"
)

// rollout is what the status needs from the workload, read as `kubectl rollout status` reads it; it mirrors
// operator/reconcile/rollout.ts so the peer is Ready exactly when the TypeScript operator is.
type rollout struct {
	exists, reported, complete bool
	replicas, ready            int32
	image                      string
}

func templateImage(spec *appsv1.DeploymentSpec, set *appsv1.StatefulSetSpec) string {
	containers := []corev1.Container{}
	if spec != nil {
		containers = spec.Template.Spec.Containers
	} else if set != nil {
		containers = set.Template.Spec.Containers
	}
	for _, c := range containers {
		if c.Name == containerName {
			return c.Image
		}
	}
	if len(containers) > 0 {
		return containers[0].Image
	}
	return ""
}

func deploymentRollout(d *appsv1.Deployment, desired int32) rollout {
	s := d.Status
	observed := s.ObservedGeneration >= d.Generation
	return rollout{
		exists:   true,
		reported: s.ObservedGeneration > 0,
		replicas: s.Replicas,
		ready:    s.ReadyReplicas,
		image:    templateImage(&d.Spec, nil),
		complete: observed && d.Spec.Replicas != nil && *d.Spec.Replicas == desired && s.UpdatedReplicas == desired &&
			s.Replicas == desired && s.ReadyReplicas == desired && s.AvailableReplicas == desired,
	}
}

func statefulSetRollout(set *appsv1.StatefulSet, desired int32) rollout {
	s := set.Status
	observed := s.ObservedGeneration >= set.Generation
	settled := desired == 0 || s.CurrentRevision == s.UpdateRevision
	return rollout{
		exists:   true,
		reported: s.ObservedGeneration > 0,
		replicas: s.Replicas,
		ready:    s.ReadyReplicas,
		image:    templateImage(nil, &set.Spec),
		complete: observed && set.Spec.Replicas != nil && *set.Spec.Replicas == desired && s.UpdatedReplicas == desired &&
			s.Replicas == desired && s.ReadyReplicas == desired && s.AvailableReplicas == desired && settled,
	}
}

// computeStatus is the instance's status for what the reconcile observed (phase, counts, image, and the
// Ready/Progressing/Degraded conditions stamped with the generation).
func computeStatus(app *myappv1.MyAppInstance, r rollout) myappv1.MyAppInstanceStatus {
	previous := app.Status
	desired := replicasOf(app)
	var status myappv1.MyAppInstanceStatus
	previous.DeepCopyInto(&status)
	status.ObservedGeneration = app.Generation
	status.Selector = selectorString(app.Name)
	if r.reported {
		status.Replicas, status.ReadyReplicas = r.replicas, r.ready
	}
	set := func(kind string, value metav1.ConditionStatus, reason, message string) {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: kind, Status: value, Reason: reason, Message: message, ObservedGeneration: app.Generation,
		})
	}
	if r.complete && r.image == app.Spec.Image {
		status.Phase = "Running"
		status.Image = app.Spec.Image
		status.Message = fmt.Sprintf("%d/%d replicas ready, running %s", status.ReadyReplicas, desired, app.Spec.Image)
		set("Ready", metav1.ConditionTrue, "Available", status.Message)
		set("Progressing", metav1.ConditionFalse, "RolloutComplete", app.Spec.Image+" is rolled out")
		set("Degraded", metav1.ConditionFalse, "AsExpected", "")
		meta.RemoveStatusCondition(&status.Conditions, "Reconciling")
		return status
	}
	reason := "RollingOut"
	switch {
	case !r.exists || previous.Image == "":
		reason = "Creating"
	case r.image == app.Spec.Image && r.replicas != desired:
		reason = "Scaling"
	}
	if previous.Image == "" && status.ReadyReplicas == 0 {
		status.Phase = "Pending"
	} else {
		status.Phase = "Progressing"
	}
	status.Message = fmt.Sprintf("%s %s: %d/%d replicas ready", reason, app.Spec.Image, status.ReadyReplicas, desired)
	set("Ready", metav1.ConditionFalse, reason, status.Message)
	set("Progressing", metav1.ConditionTrue, reason, status.Message)
	set("Degraded", metav1.ConditionFalse, "AsExpected", "")
	set("Reconciling", metav1.ConditionTrue, reason, status.Message)
	return status
}
