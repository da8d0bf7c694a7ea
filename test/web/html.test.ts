import { describe, expect, it } from "vitest";
import { escapeHtml, html, MAX_SHOWN, raw, shown, truncate } from "../../src/tools/web/html.js";

describe("html templates", () => {
  it("escapes every interpolated string, in bodies and attribute values", () => {
    const evil = `"><img src=x onerror=alert(1)>`;
    const out = html`<td title="${evil}">${"<script>alert('x')</script>"}</td>`.text;
    expect(out).toBe(
      `<td title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</td>`,
    );
    expect(out).not.toMatch(/<img|<script/);
  });

  it("keeps nested templates, joins arrays, and drops null, undefined and false", () => {
    const items = ["a<", "b>"].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${items}${null}${undefined}${false}${0}</ul>`.text).toBe("<ul><li>a&lt;</li><li>b&gt;</li>0</ul>");
    expect(html`${raw("<b>")}`.text).toBe("<b>");
  });

  it("escapes the five HTML-significant characters and nothing else", () => {
    expect(escapeHtml(`&<>"' é ✓`)).toBe("&amp;&lt;&gt;&quot;&#39; é ✓");
  });

  it("cuts a 10 MB value to what a page can show, saying how much was left out", () => {
    const big = "x".repeat(10_000_000);
    const cut = truncate(big);
    expect(cut.length).toBeLessThan(MAX_SHOWN + 60);
    expect(cut).toContain("(9,998,000 more characters)");
    expect(shown(`<${"y".repeat(5000)}`, 10).text).toBe(`&lt;yyyyyyyyy… (4,991 more characters)`);
    expect(truncate("short")).toBe("short");
  });
});
