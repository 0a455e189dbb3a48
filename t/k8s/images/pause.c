/* The sandbox process of every Pod the real-stack kubelets run: it holds
 * the Pod's namespaces, reaps what is re-parented to it, and ends on
 * SIGINT or SIGTERM (as the pause image of Kubernetes does; written here
 * because no registry is reachable to pull that one).  Built static by
 * flux_dws.realstack.images, so the image needs no libc.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void pause_end (int sig)
{
    (void)sig;
    _exit (0);
}

static void pause_reap (int sig)
{
    (void)sig;
    while (waitpid (-1, NULL, WNOHANG) > 0)
        ;
}

int main (void)
{
    struct sigaction end, reap;

    memset (&end, 0, sizeof (end));
    end.sa_handler = pause_end;
    memset (&reap, 0, sizeof (reap));
    reap.sa_handler = pause_reap;
    reap.sa_flags = SA_NOCLDSTOP;
    if (sigaction (SIGINT, &end, NULL) < 0
        || sigaction (SIGTERM, &end, NULL) < 0
        || sigaction (SIGCHLD, &reap, NULL) < 0)
        return 1;
    for (;;)
        pause ();
    return 0;
}
