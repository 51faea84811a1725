import { mockApiCommand } from "../../src/cli/commands/mock-api.ts";

/** Runs `mock-api` in this process with a fake io; resolves once it prints the URL to export. */
export async function startMockApi(args: string[]) {
  const controller = new AbortController();
  let stdout = "";
  let stderr = "";
  let announced: (url: string) => void = () => {};
  const url = new Promise<string>((resolve) => {
    announced = resolve;
  });
  const io = {
    stdout: {
      write(text: string) {
        stdout += text;
        const match = /(?:export PLATFORM_(?:INTEGRATIONAPI|SDK_API)=|baseUrl: ")([^\s"]+)/.exec(
          stdout,
        );
        if (match?.[1]) announced(match[1]);
      },
    },
    stderr: {
      write(text: string) {
        stderr += text;
      },
    },
    env: {},
    signal: controller.signal,
  };
  const exit = mockApiCommand.run(args, io);
  const baseUrl = await Promise.race([url, exit.then((code) => `exited with ${code}: ${stderr}`)]);
  return {
    baseUrl,
    exit,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: async () => {
      controller.abort();
      return exit;
    },
  };
}
