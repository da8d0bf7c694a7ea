// ESLint: the recommended rules of ESLint and typescript-eslint, lightly
// adjusted for idioms this code uses on purpose. Formatting is Prettier's.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "src/wire/generated/**", "docs/api/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // `_`-prefixed names are deliberately unused (callback positions, destructuring).
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      // Empty callbacks swallow errors on purpose where the caller reports them.
      "@typescript-eslint/no-empty-function": "off",
      "no-empty": ["error", { allowEmptyCatch: true }],
      // The JSON reader and the tests use `x as unknown as Y` to reach internals.
      "@typescript-eslint/no-unsafe-function-type": "off",
      "no-control-regex": "off",
      "no-sparse-arrays": "off",
    },
  },
  {
    // Tests pin float literals beyond double precision on purpose (Ruby's spelling of them).
    files: ["test/**", "interop-tests/**"],
    rules: { "no-loss-of-precision": "off" },
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        URL: "readonly",
      },
    },
  },
);
