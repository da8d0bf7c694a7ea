// What a dashboard extension (an add-on's tab) builds on: the one module of
// the dashboard an add-on imports (docs/ADDONS.md). A tab is data (WebTab:
// its link, its routes, its options); its pages render with the dashboard's
// html, layout, format and pagination helpers and read the request as the
// dashboard's own pages do. Anything else in src/tools/web/ may change
// without an extension noticing.
export { lazy, type Action, type Page, type Route, type WebTab } from "./route.js";
export { html, shown, type Html } from "./html.js";
export { form, pager } from "./layout.js";
export { delimited, relativeTime, utcTime } from "./format.js";
export { pageCount, paging } from "./pagination.js";
export { href, type WebRequest } from "./request.js";
export { ActionError } from "./actions.js";
