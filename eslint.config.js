// ESLint for the app's own JavaScript: the picture switcher's code, which Streamlit runs as an
// ES module in the page (components/picture_switcher/switcher.js). .ci/run runs `npm run lint`.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/", "tests/artifacts/", "bench/results/"] },
  js.configs.recommended,
  {
    files: ["components/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: globals.browser,
    },
    rules: {
      eqeqeq: "error",
      "no-var": "error",
      "prefer-const": "error",
      "no-unused-vars": ["error", { args: "after-used" }],
      "no-implicit-globals": "error",
      "no-shadow": "error",
    },
  },
];
