/**
 * The error that says what to install, for the module resolver's failure to find msw itself
 * (ESM's ERR_MODULE_NOT_FOUND, CommonJS's MODULE_NOT_FOUND); any other error as it is.
 */
export function mswMissing(error: unknown): unknown {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const notFound = code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND";
  // Only msw's own absence: a package missing under msw is another problem, told as it is.
  if (!notFound || !/(['"])msw\1/.test(String(message))) return error;
  return new Error(
    "platform-integration/msw needs msw, an optional peer dependency that is not installed: " +
      "install it next to platform-integration (npm install --save-dev msw)",
    { cause: error },
  );
}
