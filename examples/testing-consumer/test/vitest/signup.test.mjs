import { beforeEach, describe, expect, it } from "vitest";
import { signupSuite } from "../signup.suite.mjs";

signupSuite({ describe, it, expect, beforeEach });
