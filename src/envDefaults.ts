// Imported first by the entry point: Grafast reads GRAPHILE_ENV when it loads.
// Production mode unless asked otherwise (development mode adds checks that
// cost time on every request).
process.env.GRAPHILE_ENV ??= "production";
