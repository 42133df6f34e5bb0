package controller

import (
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	myappv1 "example.com/myapp/tools/controller-peer/api/v1"
)

// The children mirror operator/desired/*: same names, labels, selector, pod template and claim template. The
// mutate functions set only the fields the operator owns and leave the server's defaults alone, so a converged
// CreateOrUpdate finds nothing to change and sends no write.

const (
	containerName  = "app"
	portName       = "app"
	dataVolumeName = "data"
	dataMountPath  = "/data"
)

func selectorLabels(instance string) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "myapp", "app.kubernetes.io/instance": labelValue(instance)}
}

func childLabels(instance string) map[string]string {
	labels := selectorLabels(instance)
	labels["app.kubernetes.io/managed-by"] = "myapp-operator"
	labels["app.kubernetes.io/component"] = "server"
	return labels
}

// selectorString is status.selector: the selector labels as key=value, sorted by key.
func selectorString(instance string) string {
	labels := selectorLabels(instance)
	keys := make([]string, 0, len(labels))
	for key := range labels {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	pairs := make([]string, len(keys))
	for i, key := range keys {
		pairs[i] = key + "=" + labels[key]
	}
	return strings.Join(pairs, ",")
}

func replicasOf(app *myappv1.MyAppInstance) int32 {
	if app.Spec.Replicas == nil {
		return 1
	}
	return *app.Spec.Replicas
}

func portOf(app *myappv1.MyAppInstance) int32 {
	if app.Spec.Port == 0 {
		return 8080
	}
	return app.Spec.Port
}

func mergeLabels(into *map[string]string, labels map[string]string) {
	if *into == nil {
		*into = map[string]string{}
	}
	for key, value := range labels {
		(*into)[key] = value
	}
}

// mutatePodTemplate sets the app container (image, port, data mount, TCP readiness probe) in place, keeping the
// defaults the apiserver filled in.
func mutatePodTemplate(template *corev1.PodTemplateSpec, app *myappv1.MyAppInstance) {
	mergeLabels(&template.Labels, childLabels(app.Name))
	var container *corev1.Container
	for i := range template.Spec.Containers {
		if template.Spec.Containers[i].Name == containerName {
			container = &template.Spec.Containers[i]
		}
	}
	if container == nil {
		template.Spec.Containers = append(template.Spec.Containers, corev1.Container{Name: containerName})
		container = &template.Spec.Containers[len(template.Spec.Containers)-1]
	}
	container.Image = app.Spec.Image
	container.Ports = []corev1.ContainerPort{{Name: portName, ContainerPort: portOf(app), Protocol: corev1.ProtocolTCP}}
	container.VolumeMounts = []corev1.VolumeMount{{Name: dataVolumeName, MountPath: dataMountPath}}
	if container.ReadinessProbe == nil {
		container.ReadinessProbe = &corev1.Probe{}
	}
	container.ReadinessProbe.ProbeHandler = corev1.ProbeHandler{
		TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString(portName)},
	}
}

func mutateDeployment(deployment *appsv1.Deployment, app *myappv1.MyAppInstance) {
	mergeLabels(&deployment.Labels, childLabels(app.Name))
	deployment.Spec.Replicas = new(replicasOf(app))
	if deployment.Spec.Selector == nil { // immutable: set once, at creation
		deployment.Spec.Selector = &metav1.LabelSelector{MatchLabels: selectorLabels(app.Name)}
	}
	mutatePodTemplate(&deployment.Spec.Template, app)
	if len(deployment.Spec.Template.Spec.Volumes) == 0 {
		deployment.Spec.Template.Spec.Volumes = []corev1.Volume{
			{Name: dataVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}
	}
}

func mutateStatefulSet(set *appsv1.StatefulSet, app *myappv1.MyAppInstance) error {
	mergeLabels(&set.Labels, childLabels(app.Name))
	set.Spec.Replicas = new(replicasOf(app))
	if set.CreationTimestamp.IsZero() { // selector, serviceName, policy and claim templates are immutable
		storage, err := resource.ParseQuantity(app.Spec.Storage)
		if err != nil {
			return err
		}
		set.Spec.Selector = &metav1.LabelSelector{MatchLabels: selectorLabels(app.Name)}
		set.Spec.ServiceName = governingServiceName(app.Name)
		set.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
		set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		}
		set.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: dataVolumeName, Labels: childLabels(app.Name)},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: app.Spec.StorageClassName,
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: storage}},
			},
		}}
	}
	mutatePodTemplate(&set.Spec.Template, app)
	return nil
}

func mutateService(service *corev1.Service, app *myappv1.MyAppInstance) {
	mergeLabels(&service.Labels, childLabels(app.Name))
	service.Spec.Type = corev1.ServiceTypeClusterIP
	service.Spec.Selector = selectorLabels(app.Name)
	port := corev1.ServicePort{
		Name: portName, Port: portOf(app), TargetPort: intstr.FromInt32(portOf(app)), Protocol: corev1.ProtocolTCP,
	}
	if len(service.Spec.Ports) == 1 {
		port.NodePort = service.Spec.Ports[0].NodePort // server-assigned; keep it
	}
	service.Spec.Ports = []corev1.ServicePort{port}
}

// mutateGoverningService makes the headless Service that governs the StatefulSet (operator/desired/service.ts):
// one DNS name per pod, not-ready pods published too.
func mutateGoverningService(service *corev1.Service, app *myappv1.MyAppInstance) {
	mergeLabels(&service.Labels, childLabels(app.Name))
	service.Spec.Type = corev1.ServiceTypeClusterIP
	if service.CreationTimestamp.IsZero() { // clusterIP is immutable
		service.Spec.ClusterIP = corev1.ClusterIPNone
	}
	service.Spec.PublishNotReadyAddresses = true
	service.Spec.Selector = selectorLabels(app.Name)
	service.Spec.Ports = []corev1.ServicePort{{
		Name: portName, Port: portOf(app), TargetPort: intstr.FromInt32(portOf(app)), Protocol: corev1.ProtocolTCP,
	}}
}
