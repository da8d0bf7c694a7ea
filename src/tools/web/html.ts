// HTML built from tagged template literals: every interpolated value is
// escaped unless it is already `Html` (the output of another `html` template),
// so a job argument, error message, class or queue name can never become markup.

/** A piece of markup that is already safe to emit. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** The longest text shown for one value; the rest is cut (a 10 MB argument must not reach the page). */
export const MAX_SHOWN = 2000;

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for an element body or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** Cuts `text` to `max` characters, saying how much was left out. */
export function truncate(text: string, max = MAX_SHOWN): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… (${(text.length - max).toLocaleString("en-US")} more characters)`;
}

type Value = Html | string | number | bigint | boolean | null | undefined | readonly Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return "";
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(render).join("");
  return escapeHtml(String(v));
}

/** `html\`<td>${name}</td>\``: values escaped, nested `Html` kept, arrays joined, null/undefined/false empty. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** Markup known to be safe (constant text written here, never input). */
export function raw(text: string): Html {
  return new Html(text);
}

/** A value shown as text, escaped and truncated. */
export function shown(text: string | undefined, max = MAX_SHOWN): Html {
  return new Html(escapeHtml(truncate(text ?? "", max)));
}
