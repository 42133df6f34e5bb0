/**
 * The error shape the Pulumi dynamic-provider host reads as "created, but failed to initialize": with an `id`,
 * the engine records the resource (with `properties` as its outputs and `reasons` as its init errors) instead of
 * forgetting it, and the next `pulumi up` updates it rather than creating a second one or orphaning the first.
 */
export class ResourceInitError extends Error {
  /** The id of the object that exists in the cluster. */
  readonly id: string;
  /** The outputs to record in state. */
  readonly properties: Record<string, unknown>;
  /** One line each; the engine shows them as the resource's initialization failures. */
  readonly reasons: string[];

  constructor(message: string, id: string, properties: Record<string, unknown>, reasons: string[]) {
    super(message);
    this.name = "ResourceInitError";
    this.id = id;
    this.properties = properties;
    this.reasons = reasons;
  }
}
