import { beforeEach, describe, expect, it } from "@jest/globals";
import { signupSuite } from "../signup.suite.mjs";

signupSuite({ describe, it, expect, beforeEach });
