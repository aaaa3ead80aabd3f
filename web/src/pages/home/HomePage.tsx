import { PageLoading } from '../../components/PageLoading';
import { useCurrentUser } from '../../auth/useCurrentUser';
import { usePublicConfig } from '../../config/usePublicConfig';
import { InformantInstructions } from './InformantInstructions';
import { VisitorLanding } from './VisitorLanding';

/** /home and /home-validate: the landing page for visitors, the instructions for informants. */
export default function HomePage() {
  const { user } = useCurrentUser();
  const { data: config, isError } = usePublicConfig();
  if (!config) return <PageLoading label={isError ? 'Waiting for the server…' : 'Loading…'} />;
  return user ? <InformantInstructions user={user} config={config} /> : <VisitorLanding config={config} />;
}
