/**
 * The names that identify the MyAppInstance API on the wire. Everything else (CRD, RBAC, clients, printers)
 * derives from these, so a rename happens here or nowhere.
 */

/** API group: `example.com`, the domain a `kubebuilder init --domain example.com` project uses. */
export const group = "example.com";

/** The only served (and storage) version. */
export const version = "v1";

/** `apiVersion` of every MyAppInstance object. */
export const apiVersion = `${group}/${version}` as const;

/** `kind` of a single object. */
export const kind = "MyAppInstance";

/** `kind` of a list response. */
export const listKind = `${kind}List` as const;

/** Resource name in URLs and RBAC rules: `/apis/example.com/v1/namespaces/{ns}/myappinstances`. */
export const plural = "myappinstances";

/** Lower-case kind, as `kubectl get myappinstance` accepts it. */
export const singular = "myappinstance";

/** Short name for people at a terminal: `kubectl get myapp`. */
export const shortName = "myapp";

/** Category, so `kubectl get myapp-platform` lists every resource of this platform at once. */
export const category = "myapp-platform";

/** Name of the CustomResourceDefinition object: `<plural>.<group>`, as the apiserver requires. */
export const crdName = `${plural}.${group}` as const;

/** The instance's finalizer: the operator removes it only after cleaning up what the instance owns. */
export const finalizer = "myappinstance.finalizer.example.com";

/**
 * Annotation that asks the operator to reconcile now (Flux's `reconcile.fluxcd.io/requestedAt`): any new value,
 * by convention the time. The operator copies the value it acted on into `status.lastHandledReconcileAt`, so the
 * one who asked can tell when the status answers the request. A way to have a cause fixed outside the spec (a
 * conflicting object deleted by hand) noticed without a spec change.
 */
export const reconcileRequestAnnotation = "myapp.example.com/reconcile-requested-at";
