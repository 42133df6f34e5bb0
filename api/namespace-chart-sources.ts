/**
 * The Namespace annotation that narrows the platform's chart sources for the instances in one namespace: URL
 * prefixes separated by commas or white space, such as `oci://ghcr.io/org/team-a/, https://charts.team-a.example/`.
 * It can only narrow: a namespace gets the part of each entry that the platform's list (`--chart-sources`,
 * MyAppOperator `chartSources`) also allows, and an empty value allows ConfigMap charts only. Namespaces are the
 * platform owner's objects, so a team cannot widen its own list; an annotation rather than a label because URLs are
 * not label values.
 */
export const namespaceChartSourcesAnnotation = "myapp.example.com/chart-sources";
