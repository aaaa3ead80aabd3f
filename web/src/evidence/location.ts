/** A position as the evidence stores it: "40.71280, -74.00600 (±15 m)". */
export function formatPosition(latitude: number, longitude: number, accuracy: number | null): string {
  const where = `${latitude.toFixed(5)}, ${longitude.toFixed(5)}`;
  return accuracy !== null && Number.isFinite(accuracy) ? `${where} (±${Math.round(accuracy)} m)` : where;
}

/** Asks the browser for the current position (only after the participant asked to add it). */
export function currentPosition(): Promise<string> {
  return new Promise((resolve, reject) => {
    if (typeof navigator === 'undefined' || !navigator.geolocation) {
      reject(new Error('This browser cannot tell your location.'));
      return;
    }
    navigator.geolocation.getCurrentPosition(
      (position) => resolve(formatPosition(position.coords.latitude, position.coords.longitude, position.coords.accuracy)),
      (error) => {
        const reason =
          error.code === error.PERMISSION_DENIED
            ? 'Location access was not allowed. You can allow it in your browser settings, or upload without a location.'
            : error.code === error.TIMEOUT
              ? 'Your location could not be found in time. Try again, or upload without a location.'
              : 'Your location could not be found. Try again, or upload without a location.';
        reject(new Error(reason));
      },
      { enableHighAccuracy: true, timeout: 20_000, maximumAge: 60_000 },
    );
  });
}
