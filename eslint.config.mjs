// `npm run lint`: the recommended rules of ESLint and typescript-eslint, and
// the layout rule (docs/architecture.md): common/ imports nothing from src/
// or plugins/; plugins/ imports nothing from src/. Formatting is Prettier's
// (`npm run format`), not the linter's.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";
import { importX } from "eslint-plugin-import-x";

export default tseslint.config(
  { ignores: ["node_modules/", "generated/", "data/", "contract/", "bench/results/", "migrations/", ".data/"] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    plugins: { "import-x": importX },
    settings: { "import-x/resolver": { node: { extensions: [".ts", ".js", ".mjs"] } } },
    rules: {
      "import-x/no-restricted-paths": [
        "error",
        {
          zones: [
            { target: "./plugins", from: "./src", message: "plugins/ imports nothing from src/: what it needs comes from common/ or through the preset's services (common/services.ts)." },
            { target: "./common", from: ["./src", "./plugins"], message: "common/ is what src/ and plugins/ share: it imports from neither." },
          ],
        },
      ],
      // Plans and untyped wire data use `any` on purpose; `tsc --strict` is the type check.
      "@typescript-eslint/no-explicit-any": "off",
      // The `_name` convention of tsc's noUnusedLocals.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true }],
      // `declare global { namespace GraphileConfig { ... } }` is how graphile's types are extended.
      "@typescript-eslint/no-namespace": ["error", { allowDeclarations: true }],
      // It flags the initial value of a variable a `try` may assign before it is read.
      "no-useless-assignment": "off",
    },
  },
  { files: ["**/*.cjs"], rules: { "@typescript-eslint/no-require-imports": "off" } },
);
