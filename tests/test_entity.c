#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "entity.h"
static void Entity_smoke(void **s) { (void)s; host_entities *em = host_entities_new(); ecs_entity e; assert_int_equal(host_entity_create(em, &e), ECS_OK); assert_true(host_entity_alive(em, e)); host_entities_free(em); }
static void Entity_fails(void **s) { (void)s; assert_int_equal(1, 2); }
int main(void) { const struct CMUnitTest t[] = { cmocka_unit_test(Entity_smoke), cmocka_unit_test(Entity_fails) }; return cmocka_run_group_tests_name("entity", t, NULL, NULL); }
