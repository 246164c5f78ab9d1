// How every bench server child ends: on SIGTERM, or when the runner that
// spawned it goes away, it cleans up and exits 0; a failing start exits 1.

export function stopOn(cleanup: () => unknown): void {
  const stop = async () => {
    await cleanup();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("disconnect", stop);
}

export function runChild(main: () => Promise<void>): void {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
