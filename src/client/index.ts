// The client: enqueue from Node for Ruby workers.
export * from "./client.js";
export * from "../redis/connection.js";
export * from "../redis/retry-once.js";
export * from "./errors.js";
export * from "./fleet.js";
export * from "./middleware.js";
export * from "./normalize.js";
export * from "./strict-args.js";
export * from "./job.js";
export * from "./activejob.js";
export { RedisUnavailableError } from "../redis/availability.js";
