import { randomBytes } from "node:crypto";

/** Sidekiq's `SecureRandom.hex(12)`: 24 lowercase hex characters from a CSPRNG. */
export function newJid(): string {
  return randomBytes(12).toString("hex");
}

export const JID_PATTERN = /^[0-9a-f]{24}$/;
