// The seam of the testing entry (sidekiq-bridge/testing), Sidekiq's
// TestingClient: a client made while a recorder is installed opens no
// connection, reads no fleet, and hands each push to the recorder where
// Redis would get it, encoded by atomic-push.ts exactly as it would be
// written. The check is one field the client sets when it is made, so the
// real push path pays nothing for the seam.
import type { RubyJsonValue } from "../wire/ruby-json.js";

/** One job as the client would write it: the queue, the class, the payload's text and, for a scheduled job, its `at`. */
export interface RecordedPush {
  queue: string;
  className: string;
  /** The payload as LPUSH or ZADD would carry it. */
  json: string;
  /** Epoch seconds: the ZADD score of a scheduled job (not in `json`, as in Redis). */
  at?: RubyJsonValue;
}

/** Where pushes go instead of Redis: the testing entry's fake or inline mode. */
export interface PushRecorder {
  record(pushes: RecordedPush[]): Promise<void>;
}

let installed: PushRecorder | undefined;

/** Installs (or, with undefined, removes) the recorder that clients made from now on push to. */
export function installPushRecorder(recorder: PushRecorder | undefined): void {
  installed = recorder;
}

/** The recorder a client made now pushes to, if the testing entry is loaded. */
export function installedPushRecorder(): PushRecorder | undefined {
  return installed;
}
