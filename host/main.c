/* main.c: ecs-host's entry point (placeholder until the loader lands). */
#include <stdio.h>

#include "entity.h"

int main(int argc, char **argv)
{
    host_entities *em = host_entities_new();
    if (!em) return 1;
    host_entities_free(em);
    (void)argc;
    (void)argv;
    return 0;
}
