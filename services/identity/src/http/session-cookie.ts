import type { CookieOptions, Request, Response } from 'express';

export interface SessionCookieSettings {
  name: string;
  /** 'auto' sets Secure when the browser reached the portal over HTTPS. */
  secure: 'auto' | boolean;
  maxAgeMs: number;
}

function options(settings: SessionCookieSettings, req: Request): CookieOptions {
  return {
    httpOnly: true,
    sameSite: 'lax',
    secure: settings.secure === 'auto' ? req.secure : settings.secure,
    path: '/',
  };
}

export function setSessionCookie(settings: SessionCookieSettings, req: Request, res: Response, rawId: string): void {
  res.cookie(settings.name, rawId, { ...options(settings, req), maxAge: settings.maxAgeMs });
}

export function clearSessionCookie(settings: SessionCookieSettings, req: Request, res: Response): void {
  res.clearCookie(settings.name, options(settings, req));
}
