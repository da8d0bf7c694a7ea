// The web dashboard: a handler to mount in any Node app, or a server of its own.
export { createWebHandler, type WebHandler, type WebOptions } from "./handler.js";
export { startWebServer } from "./server.js";
