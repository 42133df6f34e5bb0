/** A packed chart made in memory: a gzipped tar of the files given, as `helm package` writes one. */
import { gzipSync } from "node:zlib";
import { pack } from "tar-stream";

/** A gzipped tar of `files` (path → contents). @default a Chart.yaml of `app` only */
export async function chartArchive(
  files: Record<string, string | Uint8Array> = { "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n" },
): Promise<Uint8Array> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on("data", (chunk) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve) => tar.on("end", () => resolve()));
  for (const [name, contents] of Object.entries(files)) tar.entry({ name }, Buffer.from(contents));
  tar.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}
