import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import { apiErrorSchema } from './errors.js';
import {
  adminUserUpdateSchema,
  checkRequestSchema,
  checkResponseSchema,
  loginRequestSchema,
  okResponseSchema,
  pageQuerySchema,
  profileUpdateSchema,
  registerRequestSchema,
  userSchema,
} from './users.js';
import { publicConfigSchema } from './public-config.js';

const json = <S extends z.ZodType>(schema: S) => ({ content: { 'application/json': { schema } } });
const error = (description: string) => ({ description, ...json(apiErrorSchema) });

const binary = z.string().meta({ format: 'binary' });
const sessionCookie = { cookieAuth: [] };
const userIdPath = z.object({ id: z.string().meta({ description: 'User id (UUID)' }) });
const nextLink = {
  Link: z.string().meta({
    description: 'RFC 8288 link to the next page, present while there is one: </path?limit=50&cursor=...>; rel="next"',
  }),
};

const commonErrors = {
  '400': error('The input breaks a rule; message says which, fields say where'),
  '429': error('Too many requests from this address or for this account'),
};
const signedIn = { ...commonErrors, '401': error('No session: log in first') };
const adminOnly = { ...signedIn, '403': error('Only administrators may do this') };

function op(operation: ZodOpenApiOperationObject): ZodOpenApiOperationObject {
  return operation;
}

const paths: ZodOpenApiPathsObject = {
  '/api/config': {
    get: op({
      summary: 'Event-specific words and links (product name, meeting place, videos)',
      tags: ['config'],
      responses: { '200': { description: 'The public configuration', ...json(publicConfigSchema) } },
    }),
  },
  '/api/user/register': {
    post: op({
      summary: 'Register a participant (role 1) with a face photo',
      tags: ['users'],
      requestBody: {
        content: {
          'multipart/form-data': {
            schema: registerRequestSchema.extend({
              verification_photo: binary.meta({ description: 'A clear face photo (JPEG, PNG, WebP, GIF or AVIF); its content is checked' }),
              role: z.string().optional().meta({ description: 'Ignored: self-registration always gets role 1' }),
              usernameOrEmail: z.string().optional().meta({ description: 'Ignored' }),
            }),
          },
        },
      },
      responses: {
        '201': { description: 'The new user', ...json(userSchema) },
        ...commonErrors,
        '409': error('The username or e-mail address is taken'),
        '413': error('The photo is too large'),
        '415': error('The photo is not an image'),
      },
    }),
  },
  '/api/user/check': {
    post: op({
      summary: 'Is a username or e-mail address taken?',
      tags: ['users'],
      requestBody: json(checkRequestSchema),
      responses: { '200': { description: 'Whether an account exists', ...json(checkResponseSchema) }, ...commonErrors },
    }),
  },
  '/api/user/login': {
    post: op({
      summary: 'Log in with username or e-mail; sets the httpOnly session cookie',
      tags: ['users'],
      requestBody: json(loginRequestSchema),
      responses: {
        '200': { description: 'Logged in; a new session cookie is set', ...json(userSchema) },
        ...commonErrors,
        '401': error("The username and password didn't match"),
      },
    }),
  },
  '/api/user/logout': {
    post: op({
      summary: 'End this session and clear the cookie',
      tags: ['users'],
      responses: { '200': { description: 'Logged out', ...json(okResponseSchema) } },
    }),
  },
  '/api/user': {
    get: op({
      summary: 'The signed-in user',
      tags: ['users'],
      security: [sessionCookie],
      responses: { '200': { description: 'The user object itself', ...json(userSchema) }, '401': error('No session') },
    }),
  },
  '/api/evidence/user': {
    put: op({
      summary: "Update one's own profile, optionally with a new avatar",
      tags: ['users'],
      security: [sessionCookie],
      requestBody: {
        content: {
          'multipart/form-data': {
            schema: profileUpdateSchema.extend({ file: binary.optional().meta({ description: 'New avatar image' }) }),
          },
          'application/json': { schema: profileUpdateSchema },
        },
      },
      responses: {
        '200': { description: 'The updated user', ...json(userSchema) },
        ...signedIn,
        '409': error('The e-mail address belongs to another account'),
        '413': error('The avatar is too large'),
        '415': error('The avatar is not an image'),
      },
    }),
  },
  '/api/user/watched/{id}': {
    put: op({
      summary: 'Mark the onboarding video as watched (oneself, or anyone for an administrator)',
      tags: ['users'],
      security: [sessionCookie],
      requestParams: { path: userIdPath },
      responses: {
        '200': { description: 'The updated user', ...json(userSchema) },
        ...signedIn,
        '403': error("Another participant's account"),
        '404': error('No such user'),
      },
    }),
  },
  '/api/user/users': {
    get: op({
      summary: 'All users, oldest first, a page at a time (administrators)',
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { query: pageQuerySchema },
      responses: {
        '200': { description: 'One page of users', headers: z.object(nextLink), ...json(z.array(userSchema)) },
        ...adminOnly,
      },
    }),
  },
  '/api/user/admin/{id}': {
    put: op({
      summary: "Edit a user's username, e-mail, phone number and full name (administrators)",
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { path: userIdPath },
      requestBody: json(adminUserUpdateSchema),
      responses: {
        '200': { description: 'The updated user; role and video_watched unchanged', ...json(userSchema) },
        ...adminOnly,
        '404': error('No such user'),
        '409': error('The username or e-mail address is taken'),
      },
    }),
  },
  '/api/user/{id}': {
    delete: op({
      summary: 'Delete a user; their sessions end at once and their data is removed everywhere (administrators)',
      tags: ['administration'],
      security: [sessionCookie],
      requestParams: { path: userIdPath },
      responses: {
        '200': { description: 'Deleted', ...json(okResponseSchema) },
        ...adminOnly,
        '404': error('No such user'),
      },
    }),
  },
  '/api/user/{id}/avatar': {
    get: op({
      summary: "A user's avatar (public)",
      tags: ['users'],
      requestParams: { path: userIdPath },
      responses: { '200': { description: 'WebP image', content: { 'image/webp': { schema: binary } } }, '404': error('No avatar') },
    }),
  },
  '/api/user/{id}/verification-photo': {
    get: op({
      summary: "A user's verification photo (its owner and administrators only)",
      tags: ['users'],
      security: [sessionCookie],
      requestParams: { path: userIdPath },
      responses: {
        '200': { description: 'JPEG image', content: { 'image/jpeg': { schema: binary } } },
        '401': error('No session'),
        '403': error("Another participant's photo"),
        '404': error('No photo'),
      },
    }),
  },
};

/** The OpenAPI document, generated from the same schemas that validate the requests. */
export function buildOpenApiDocument(): ReturnType<typeof createDocument> {
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Evidence portal API',
      version: '1.0.0',
      description:
        'Errors are JSON { code, message, fields? }. Lists are paginated with ?limit= and ?cursor=; the next page is announced in a Link header (rel="next").',
    },
    components: {
      securitySchemes: {
        cookieAuth: { type: 'apiKey', in: 'cookie', name: 'portal_session', description: 'httpOnly session cookie set by login' },
      },
    },
    paths,
  });
}
