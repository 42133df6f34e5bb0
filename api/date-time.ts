/**
 * Timestamps as the apiserver checks `format: date-time` (kube-openapi's `strfmt.IsDateTime`), so zod accepts
 * exactly what the apiserver accepts: a calendar date, "T" (either case), hh:mm:ss, an optional fraction, and
 * "Z" or a ±hh:mm offset; seconds up to 59. Kubernetes itself writes "2006-01-02T15:04:05Z".
 */

// Same as kube-openapi's DateTimePattern (whose "." before the fraction matches any character), on lower case.
const timeRegExp = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
const dateRegExp = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;

/** True when the apiserver would accept `text` as a `date-time`. */
export function isDateTime(text: string): boolean {
  // IsDateTime splits the lower-cased text at every "t" and looks at the first two parts only.
  const [date, time] = text.toLowerCase().split("t");
  if (text.length < 4 || date === undefined || time === undefined || !isDate(date)) return false;
  const match = timeRegExp.exec(time);
  if (!match) return false;
  const [, hours = "", minutes = "", seconds = ""] = match;
  return hours <= "23" && minutes <= "59" && seconds <= "59";
}

// Go's time.Parse("2006-01-02", ...): a real calendar date.
function isDate(text: string): boolean {
  const match = dateRegExp.exec(text);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}
