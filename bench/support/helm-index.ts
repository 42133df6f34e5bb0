/**
 * A repository index.yaml in Helm's layout, ~10 MiB: 300 charts (`chart0` … `chart299`) of 60 versions each
 * (`1.0.0` … `1.59.0`), each version's one URL `chart<c>-1.<v>.0.tgz`. Large enough that parsing it whole holds the
 * event loop for seconds (the yaml library reads ~2.5 MiB/s), so the chart engine's piecewise scan shows.
 */
export const largeHelmIndex: string = (() => {
  const lines = ["apiVersion: v1", "entries:"];
  for (let c = 0; c < 300; c++) {
    lines.push(`  chart${c}:`);
    for (let v = 0; v < 60; v++) {
      lines.push(
        `  - apiVersion: v2`,
        `    created: "2024-01-01T00:00:00Z"`,
        `    description: ${"A chart that does something useful, described at length. ".repeat(3)}`,
        `    digest: ${"a".repeat(64)}`,
        `    maintainers:`,
        `    - email: x@example.com`,
        `      name: x`,
        `    name: chart${c}`,
        `    urls:`,
        `    - chart${c}-1.${v}.0.tgz`,
        `    version: 1.${v}.0`,
      );
    }
  }
  lines.push("generated: 2024-01-01T00:00:00Z", "");
  return lines.join("\n");
})();
