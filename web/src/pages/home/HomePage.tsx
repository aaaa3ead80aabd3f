import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { OfflineNotice } from '../../components/OfflineNotice';
import { PageLoading } from '../../components/PageLoading';
import { useOnline } from '../../components/useOnline';
import { CURRENT_USER_KEY, useCurrentUser } from '../../auth/useCurrentUser';
import { usePublicConfig } from '../../config/usePublicConfig';
import { InformantInstructions } from './InformantInstructions';
import { VisitorLanding } from './VisitorLanding';

/**
 * /home and /home-validate: the landing page for visitors, the instructions for informants.
 * Offline, a visitor (who can neither log in nor register) is told so; the page comes back with
 * the network.
 */
export default function HomePage() {
  const { user } = useCurrentUser();
  const { data: config, isError } = usePublicConfig();
  const online = useOnline();
  const client = useQueryClient();
  const wasOffline = useRef(!online);
  useEffect(() => {
    if (!online) wasOffline.current = true;
    else if (wasOffline.current) {
      // Back online: who is signed in was a guess made offline.
      wasOffline.current = false;
      void client.invalidateQueries({ queryKey: CURRENT_USER_KEY, exact: true });
    }
  }, [online, client]);
  if (!online && (!user || !config)) return <OfflineNotice />;
  if (!config) return <PageLoading label={isError ? 'Waiting for the server…' : 'Loading…'} />;
  return user ? <InformantInstructions user={user} config={config} /> : <VisitorLanding config={config} />;
}
