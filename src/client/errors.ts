/** Sidekiq's client-side ArgumentError, with Ruby's own wording where there is one. */
export class SidekiqArgumentError extends Error {
  override name = "SidekiqArgumentError";
}

/** `dialect: "auto"` could not tell what the live fleet reads. */
export class DialectDetectionError extends Error {
  override name = "DialectDetectionError";
}
