/**
 * Whether a chart's main workload runs `spec.image`: a chart decides its own images from the values it is given,
 * and one that ignores them (its own default tag, no digest support, a hard-coded image) must not report Ready for
 * an image it does not run. Pure.
 */
import { objectName, splitImage, type RenderedObject, type RenderRefusal } from "../../chart/index.ts";

/** The reason of the problem when the main workload runs another image than `spec.image`. */
export const ImageMismatch = "ImageMismatch";

/**
 * True when a container's `image` runs `wanted` (spec.image). The registry and repository must be the same (a Docker
 * Hub name with or without `docker.io/library/`). With a digest in `wanted`, the digest decides: `image` must carry
 * the same one (its tag, if any, does not matter: the runtime pulls by digest). Without one, the tags must be equal
 * (`latest` when a reference has neither), and a digest `image` adds is the chart's own pin of that tag. With
 * `tagFromChart` (the instance unmapped `valuePaths.imageTag`) a `wanted` without tag or digest leaves the tag to
 * the chart, as documented: only the repository must match.
 */
export function runsImage(image: string, wanted: string, tagFromChart = false): boolean {
  const running = splitImage(image);
  const spec = splitImage(wanted);
  if (canonicalRepository(running.repository) !== canonicalRepository(spec.repository)) return false;
  if (spec.digest !== undefined) return running.digest === spec.digest;
  if (tagFromChart && !hasTag(wanted)) return true;
  return (running.tag ?? "latest") === spec.tag;
}

/** Whether a reference names a tag itself (`nginx:1.27`), rather than implying `latest` (`nginx`). */
function hasTag(reference: string): boolean {
  const name = reference.split("@")[0] ?? reference;
  return name.lastIndexOf(":") > name.lastIndexOf("/");
}

/**
 * The problem when no container of the chart's main workload (its pod template's `containers`, not init
 * containers) runs `specImage`; undefined when one does, or when the chart renders no workload.
 */
export function imageMismatch(
  main: RenderedObject | undefined,
  specImage: string,
  tagFromChart = false,
): RenderRefusal | undefined {
  if (!main) return undefined;
  const spec = main.spec as { template?: { spec?: { containers?: { image?: unknown }[] } } } | undefined;
  const images = (spec?.template?.spec?.containers ?? [])
    .map((container) => container.image)
    .filter((image): image is string => typeof image === "string");
  if (images.some((image) => runsImage(image, specImage, tagFromChart))) return undefined;
  return {
    reason: ImageMismatch,
    message:
      `the chart's main workload ${objectName(main)} runs ${images.join(", ") || "no image"}, not spec.image ` +
      `${specImage}; map spec.chart.valuePaths (imageRepository, imageTag, imageDigest) to where the chart reads ` +
      "its image",
  };
}

/** `nginx`, `docker.io/nginx` and `docker.io/library/nginx` are one repository, as the container runtime resolves them. */
function canonicalRepository(repository: string): string {
  const slash = repository.indexOf("/");
  const first = slash < 0 ? "" : repository.slice(0, slash);
  const hasRegistry = first.includes(".") || first.includes(":") || first === "localhost";
  if (hasRegistry && first !== "docker.io" && first !== "index.docker.io") return repository;
  const path = hasRegistry ? repository.slice(slash + 1) : repository;
  return `docker.io/${path.includes("/") ? path : `library/${path}`}`;
}
