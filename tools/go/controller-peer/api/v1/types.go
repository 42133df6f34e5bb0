// Package v1 holds hand-written Go types for example.com/v1 MyAppInstance: the fields the peer reads and writes,
// with the deep copies controller-gen would generate (written by hand so the peer needs no code generator).
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupVersion is the API group and version of MyAppInstance.
var GroupVersion = schema.GroupVersion{Group: "example.com", Version: "v1"}

// SchemeBuilder registers the types with a scheme; AddToScheme is what main calls.
var (
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	AddToScheme   = SchemeBuilder.AddToScheme
)

func init() { SchemeBuilder.Register(&MyAppInstance{}, &MyAppInstanceList{}) }

// MyAppInstanceSpec mirrors api/spec.ts; the CRD's defaults (replicas 1, port 8080, Retain) are applied by the
// apiserver, so the peer reads them as set.
type MyAppInstanceSpec struct {
	Replicas             *int32  `json:"replicas,omitempty"`
	Image                string  `json:"image"`
	Port                 int32   `json:"port,omitempty"`
	Storage              string  `json:"storage,omitempty"`
	StorageClassName     *string `json:"storageClassName,omitempty"`
	StorageReclaimPolicy string  `json:"storageReclaimPolicy,omitempty"`
}

// MyAppInstanceStatus mirrors api/status.ts.
type MyAppInstanceStatus struct {
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Replicas           int32              `json:"replicas"`
	ReadyReplicas      int32              `json:"readyReplicas"`
	Phase              string             `json:"phase,omitempty"`
	Image              string             `json:"image,omitempty"`
	Message            string             `json:"message,omitempty"`
	Selector           string             `json:"selector,omitempty"`
}

// MyAppInstance is one application instance.
type MyAppInstance struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MyAppInstanceSpec   `json:"spec,omitempty"`
	Status MyAppInstanceStatus `json:"status,omitempty"`
}

// MyAppInstanceList is a list of MyAppInstances.
type MyAppInstanceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MyAppInstance `json:"items"`
}

// DeepCopyInto copies the spec into out.
func (in *MyAppInstanceSpec) DeepCopyInto(out *MyAppInstanceSpec) {
	*out = *in
	if in.Replicas != nil {
		out.Replicas = new(*in.Replicas)
	}
	if in.StorageClassName != nil {
		out.StorageClassName = new(*in.StorageClassName)
	}
}

// DeepCopyInto copies the status into out.
func (in *MyAppInstanceStatus) DeepCopyInto(out *MyAppInstanceStatus) {
	*out = *in
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

// DeepCopyInto copies the instance into out.
func (in *MyAppInstance) DeepCopyInto(out *MyAppInstance) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

// DeepCopyObject implements runtime.Object.
func (in *MyAppInstance) DeepCopyObject() runtime.Object {
	out := new(MyAppInstance)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *MyAppInstanceList) DeepCopyObject() runtime.Object {
	out := new(MyAppInstanceList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]MyAppInstance, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
