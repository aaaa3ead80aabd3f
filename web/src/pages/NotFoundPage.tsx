import Button from '@mui/material/Button';
import { Link as RouterLink } from 'react-router';
import { Page } from '../components/Page';

/** Any path that is not a route of the app. */
export default function NotFoundPage() {
  return (
    <Page title="404">
      <Button component={RouterLink} to="/home" variant="outlined">
        Home
      </Button>
    </Page>
  );
}
