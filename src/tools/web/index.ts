// The web dashboard: a handler to mount in any Node app, or a server of its own.
export { createWebHandler, CONTENT_SECURITY_POLICY, type WebHandler, type WebOptions } from "./handler.js";
export { startWebServer, type WebServer } from "./server.js";
