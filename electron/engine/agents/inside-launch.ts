/** How an agent inside the sandbox is started: a `sandbox:` command, or a recipe's. */
export interface InsideLaunch {
  readonly command: string;
  /** Extra environment (a recipe's); `@PORT@` becomes the endpoint's port inside. */
  readonly env: Readonly<Record<string, string>>;
  /** Files written into HOME before each start (a recipe's config); `@PORT@`/`@MODEL@` filled in. */
  readonly homeFiles: Readonly<Record<string, string>>;
  /** The host directory put read-only at /opt/agent, or null. */
  readonly agentDir: string | null;
  /** Volatile parts of tool outputs (regex sources) ignored when a re-run is compared. */
  readonly volatile: readonly string[];
  /** The recipe it came from, for the header. */
  readonly recipe?: string;
}
